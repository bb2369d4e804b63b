#pragma once
// GnReconstructor: absolute imaging on the host: a "gn" model's Gauss–Newton (recon/
// gauss_newton.hpp) run on every frame, one conductivity per element (n_out = n_elems).
//
// Streaming: the first frame (and the first after a divergence) starts from the model's start
// value and runs the model's full iteration count; every later frame warm-starts from the previous
// frame's σ and runs options.frame_iterations (default: the model's frame_iterations), with the λ
// schedule restarted at λ₀. A frame with a NaN/Inf value gets kFlagNonFinite and an all-zero image
// and leaves the warm start untouched; a diverging frame (NaN, σ ≤ 0 outside compat mode, singular
// system) gets kFlagDiverged, its image is the last good iterate and the next frame starts cold.
// Both are counted; nothing throws on the per-frame path. Each cold-started frame is also fitted
// to the model's homogeneous voltages F(1) (recon/gn_homogeneous_fit.hpp) and counted as
// mismatched when it does not correlate with them: `reconstruct` prints that fit, so a recording
// of opposite polarity or another pattern is named instead of only diverging. The reference
// (set_reference) is checked for size and otherwise unused: absolute images need none.
//
// Complex conductivity (the model's GnOptions::complex_conductivity): a frame is n_meas
// interleaved (re, im) pairs — 2·n_meas floats, the layout of complex64 samples — and the image
// n_elems interleaved (Re σ, Im σ) pairs (n_meas() and n_out() count floats: 2·n_meas, 2·n_elems);
// the solver's solve_complex runs instead of solve. A solver without complex support (the CUDA
// one) is refused at construction with a message.
//
// The work happens in submit() (frames of a batch in order); complete() hands the batch back.
// The solver is pluggable (GnSolver): the host one (recon::GaussNewton) by default, the CUDA one
// (gpu/src/cuda_gn_backend.cpp, `--backend cuda`) through the second constructor; the streaming
// rules above are the same for both.
// One thread calls every method. Allocates per iteration (sparse factorisation, Jᵀ, normal matrix;
// see gauss_newton.hpp): the GN path trades the pipeline's no-allocation rule for a solver of
// ~10⁷–10¹⁰ flops per frame, where the allocations are not measurable.
#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "eit/pipeline/reconstructor.hpp"
#include "eit/recon/gauss_newton.hpp"
#include "eit/recon/model.hpp"

namespace eit::pipeline {

// One Gauss–Newton solve of a frame (recon::GaussNewton::solve's contract): start empty = the
// model's start; max_iterations < 0 = the model's count. May throw (counted as a divergence).
class GnSolver {
 public:
  virtual ~GnSolver() = default;
  virtual recon::GnResult solve(const Eigen::VectorXd& v, const Eigen::VectorXd& start,
                                int max_iterations) = 0;
  virtual const recon::GnTimings& timings() const noexcept = 0;
  // Complex conductivity (recon::GaussNewton::solve_complex's contract). Solvers that have it
  // say so; the default refuses.
  virtual bool supports_complex() const noexcept { return false; }
  virtual recon::GnComplexResult solve_complex(const Eigen::VectorXcd& v,
                                               const Eigen::VectorXcd& start, int max_iterations);
};

struct GnReconstructorOptions {
  size_t max_batch = 16;
  int frame_iterations = -1;  // warm-started iterations per frame; < 0: the model's
  bool warm_start = true;     // false: every frame starts cold with the full iteration count
};

struct GnFrameCounts {
  uint64_t frames = 0, non_finite = 0, diverged = 0, iterations = 0;
  // Cold-started frames (the first, and each after a divergence) checked against the model's
  // homogeneous voltages F(1), and those that do not match it: correlation < kGnMatchCorrelation
  // (opposite polarity, another order or pattern) or no positive σ₀.
  uint64_t fitted = 0, mismatched = 0;
  recon::HomogeneousFit first_fit{};  // the first cold frame's fit (complex: |σ₀|, Re s); NaN
                                      // fields until a frame came
};
// Below this correlation with F(1) a frame is not the model's measurement (recon's threshold,
// which also decides whether the fitted start rescales λ).
inline constexpr double kGnMatchCorrelation = recon::kGnMatchCorrelation;

class GnReconstructor final : public Reconstructor {
 public:
  // Throws std::invalid_argument unless the model is a "gn" model.
  explicit GnReconstructor(const recon::Model& model, GnReconstructorOptions options = {});
  // The same streaming around another solver of the same model (e.g. the CUDA one); name() then
  // returns `name` (a string literal or other static text).
  GnReconstructor(const recon::Model& model, GnReconstructorOptions options,
                  std::unique_ptr<GnSolver> solver, std::string_view name);
  ~GnReconstructor() override;

  std::string_view name() const noexcept override { return name_; }
  size_t n_meas() const noexcept override { return n_meas_; }
  size_t n_out() const noexcept override { return n_out_; }
  size_t max_batch() const noexcept override { return max_batch_; }
  size_t max_in_flight() const noexcept override { return 1; }

  void set_reference(std::span<const double> v_ref, bool normalize) override;
  bool submit(std::span<FrameSlot* const> batch) override;
  size_t complete(std::span<FrameSlot*> out, bool wait) override;
  size_t in_flight() const noexcept override { return pending_ > 0 ? 1 : 0; }

  const GnFrameCounts& counts() const noexcept { return counts_; }
  const recon::GnTimings& timings() const noexcept { return solver_->timings(); }
  const Eigen::VectorXd& sigma() const noexcept { return sigma_; }  // last good σ (real model)
  const Eigen::VectorXcd& sigma_complex() const noexcept { return sigma_c_; }  // complex model

 private:
  void reconstruct(FrameSlot& frame);
  // Counts a cold frame's homogeneous fit (GnFrameCounts::fitted, mismatched, first_fit).
  template <class Vector>
  void check_fit(const Vector& v);
  // Runs the solver on frame f's values, warm or cold; false when it diverged.
  template <class Vector>
  bool solve_frame(const FrameSlot& f, Vector& sigma);

  std::unique_ptr<GnSolver> solver_;
  std::string_view name_;
  GnReconstructorOptions options_;
  int full_iterations_, frame_iterations_;
  bool complex_;
  size_t n_meas_, n_out_, max_batch_;  // floats per frame and per image
  Eigen::VectorXd v_, sigma_;
  Eigen::VectorXcd v_c_, sigma_c_;
  Eigen::VectorXd v_unit_;  // F(1) of the model's forward problem, for check_fit
  bool warm_ = false;
  GnFrameCounts counts_;
  std::vector<FrameSlot*> batch_;
  size_t pending_ = 0;
};

}  // namespace eit::pipeline
