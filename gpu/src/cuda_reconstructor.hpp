#pragma once
// CudaReconstructor: the pipeline::Reconstructor of the CUDA backend (contract in
// eit/gpu/cuda_backend.hpp). Pending batches sit in a ring of max_in_flight entries; entry i
// uses launch lane i (its stream) or the persistent kernel, and complete() returns entries in
// ring order, so completion is in submission order whichever path each batch took.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "device_matrix.hpp"
#include "eit/gpu/cuda_backend.hpp"
#include "l2_residency.hpp"
#include "launch_lane.hpp"
#include "mapped_frame_allocator.hpp"
#include "persistent_engine.hpp"

namespace eit::gpu {

class CudaReconstructor final : public pipeline::Reconstructor {
 public:
  CudaReconstructor(const recon::Model& model, const CudaOptions& options);
  ~CudaReconstructor() override;

  std::string_view name() const noexcept override { return "cuda"; }
  size_t n_meas() const noexcept override { return matrix_.model().n_meas; }
  size_t n_out() const noexcept override { return matrix_.model().n_out; }
  size_t max_batch() const noexcept override { return options_.max_batch; }
  size_t max_in_flight() const noexcept override { return options_.max_in_flight; }
  void set_reference(std::span<const double> v_ref, bool normalize) override;
  bool submit(std::span<pipeline::FrameSlot* const> batch) override;
  size_t complete(std::span<pipeline::FrameSlot*> out, bool wait) override;
  size_t in_flight() const noexcept override { return count_; }
  pipeline::HostAllocator& frame_allocator() override { return frames_; }
  void bind_frames(const pipeline::FramePool& pool) override;
  // One frame: a persistent-kernel or one-launch round trip of a few µs (docs/benchmarks.md,
  // "Run to completion with the CUDA backend").
  bool fast_single_frames() const noexcept override { return true; }

  CudaStats stats() const;

 private:
  struct Pending {
    bool persistent = false;
    uint64_t seq = 0;           // persistent frame number
    size_t n = 0;
    std::vector<pipeline::FrameSlot*> frames;  // max_batch entries, allocated at set-up
  };
  FrameDesc describe(const pipeline::FrameSlot& frame) const;
  void activate_device() const;

  CudaOptions options_;
  MappedFrameAllocator frames_;   // frame memory; outlives the pools made from it (caller's duty)
  MappedRange values_, images_;   // the bound pool's two blocks (empty until bind_frames)
  DeviceMatrix matrix_;
  std::unique_ptr<L2Residency> l2_;  // before the lanes, whose streams use its window
  std::vector<std::unique_ptr<LaunchLane>> lanes_;
  std::unique_ptr<PersistentEngine> persistent_;
  std::vector<Pending> ring_;
  size_t head_ = 0, count_ = 0, persistent_pending_ = 0;
  CudaStats stats_;
};

}  // namespace eit::gpu
