#pragma once
// CudaGaussNewton: the whole Gauss–Newton iteration of recon/gauss_newton.hpp on one CUDA device,
// for point electrodes and the diagonal priors (kotre, lm, noser, tikhonov). Per iteration, on the
// device and in float64 throughout:
//   K(σ) assembled dense (atomic scatter of σ_e K_e), grounded at ref_node;
//   cuSOLVER Cholesky (potrf) and one potrs for all n_el unit-current fields at once;
//   v(σ), the residual, the electrode-field gradients and Jᵀ (n_elems × n_meas) by kernels;
//   the smaller normal matrix by cuBLAS SYRK (J R⁻¹ Jᵀ + λI or JᵀJ + λR), cuSOLVER potrf/potrs;
//   the update and the stop/divergence reductions by a kernel.
// The iteration is replayed as a CUDA graph by default (use_graph below).
// Only the frame goes up (once per solve), three scalars per iteration (‖d‖, ‖σ‖, a fault flag)
// and σ at the end come down. Same modes and results as the CPU solver (tests: 1e-5 relative;
// both are float64, the differences are rounding). Dense K suits 2-D meshes up to tens of
// thousands of nodes (8·n² bytes).
//
// Set-up allocates device memory and throws std::runtime_error (no device, CEM, Laplacian prior)
// or std::invalid_argument; solve() allocates nothing and throws pipeline::BackendError-free
// std::runtime_error naming a failing CUDA call. One thread at a time.
#include <memory>
#include <string>

#include <Eigen/Core>

#include "eit/recon/gauss_newton.hpp"

namespace eit::gpu {

// True when a CUDA device can be used; otherwise false with the reason in *why.
bool cuda_gn_available(std::string* why = nullptr);

class CudaGaussNewton {
 public:
  CudaGaussNewton(const recon::Mesh& mesh, const recon::Protocol& protocol,
                  const recon::GnOptions& options);
  ~CudaGaussNewton();
  CudaGaussNewton(const CudaGaussNewton&) = delete;
  CudaGaussNewton& operator=(const CudaGaussNewton&) = delete;

  // As recon::GaussNewton::solve (start: empty = the options' scalar or fitted start).
  recon::GnResult solve(const Eigen::VectorXd& v, const Eigen::VectorXd& start = {},
                        int max_iterations = -1);

  // Device time per part (cudaEvent), summed over iterations since the last reset.
  const recon::GnTimings& timings() const noexcept;
  void reset_timings() noexcept;

  // The iteration as a CUDA graph (default on): the forward/Jacobian/system/solve launches, the
  // cuBLAS and cuSOLVER calls of one iteration captured once (per iterate buffer: two graphs)
  // and replayed, λ read from device memory. If capture fails the solver launches as before and
  // graph_note() says why. With the graph, timings() has the total only (no per-part split).
  void use_graph(bool on) noexcept;
  bool graph_active() const noexcept;  // on and not failed
  const std::string& graph_note() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eit::gpu
