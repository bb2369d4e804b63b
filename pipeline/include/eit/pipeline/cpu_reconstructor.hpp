#pragma once
// CpuReconstructor: the Reconstructor on the host, Eigen float32, one thread by default.
//
//   image_j = H · (w ⊙ (v_j − v_ref))     GEMV for a batch of one, GEMM for a batch of several
//
// CpuOptions::threads > 1: a batch of several frames is split by rows of H over that many
// threads (the calling thread and threads − 1 helpers started in the constructor, each with its
// own GEMM packing buffers); the helpers spin ~50 µs after a batch, then sleep on a futex
// doorbell, so an idle backend costs nothing. Every output element is still one dot product over
// the whole of H's row, by the same kernel. Single frames stay on the calling thread (a GEMV of
// this size is faster than waking a helper).
//
// H is borrowed, not copied: the model (or matrix) must outlive the reconstructor. All scratch
// (the dv block, the GEMM result and GEMM's packing buffers) is allocated in the constructor, so
// submit() and complete() never allocate. The work happens in submit(); complete() hands the
// batch back. A frame with a NaN/Inf measurement (or already flagged kFlagNonFinite) gets
// kFlagNonFinite and an all-zero image; it never poisons the other frames of its batch.
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include <Eigen/Core>

#include "eit/pipeline/reconstructor.hpp"
#include "eit/recon/model.hpp"

namespace eit::pipeline {

struct CpuOptions {
  size_t max_batch = 16;
  size_t threads = 1;  // threads computing a batch (the caller's included); 1: no helpers
};

class CpuReconstructor final : public Reconstructor {
 public:
  // Uses the model's v_ref and normalize flag when the model has a v_ref; otherwise the reference
  // is zero until set_reference(). Throws std::invalid_argument on an empty H or bad sizes.
  explicit CpuReconstructor(const recon::Model& model, CpuOptions options = {});
  CpuReconstructor(const recon::MatrixRowMajorF& H, CpuOptions options = {});
  ~CpuReconstructor() override;

  std::string_view name() const noexcept override { return "cpu"; }
  size_t threads() const noexcept;
  size_t n_meas() const noexcept override { return static_cast<size_t>(H_.cols()); }
  size_t n_out() const noexcept override { return static_cast<size_t>(H_.rows()); }
  size_t max_batch() const noexcept override { return max_batch_; }
  size_t max_in_flight() const noexcept override { return 1; }

  void set_reference(std::span<const double> v_ref, bool normalize) override;
  bool submit(std::span<FrameSlot* const> batch) override;
  size_t complete(std::span<FrameSlot*> out, bool wait) override;
  size_t in_flight() const noexcept override { return pending_ > 0 ? 1 : 0; }
  bool synchronous() const noexcept override { return true; }
  void warm() noexcept override;  // one load per cache line of H, v_ref and the weights
  // H of at most kWarmMaxBytes: a larger one takes longer to re-read than a frame gains from it,
  // and a frame that arrives meanwhile waits for the whole read.
  bool warms() const noexcept override;
  // Measured at 50 frames/s, 2-core AMD VM (docs/benchmarks.md, "Cache warming for H that
  // fits"): 3.4 MB warmed, compute p50 67-70 µs against 358-413 cold; 14.8-74 MB warmed, end to
  // end p99 +0.3 to +3 ms.
  static constexpr size_t kWarmMaxBytes = size_t{4} << 20;

 private:
  void helper_loop(size_t k) noexcept;
  struct Gemm;     // Eigen's GEMM kernel with its packing buffers, preallocated
  struct Helpers;  // the helper threads of CpuOptions::threads > 1
  Eigen::Map<const recon::MatrixRowMajorF> H_;
  size_t max_batch_;
  Eigen::VectorXf v_ref_, weight_;  // dv = (v − v_ref) ⊙ weight
  Eigen::MatrixXf dv_;              // n_meas × max_batch, column j = frame j
  Eigen::MatrixXf result_;          // n_out × max_batch, GEMM output
  std::unique_ptr<Gemm> gemm_;
  std::unique_ptr<Helpers> helpers_;  // null with one thread
  std::vector<FrameSlot*> batch_;     // the pending batch (capacity max_batch)
  size_t pending_ = 0;
};

}  // namespace eit::pipeline
