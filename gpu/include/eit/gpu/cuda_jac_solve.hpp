#pragma once
// The n_meas-sized solve of JAC's diagonal priors on the GPU, in double (recon::JacOptions::
// DiagonalSolve): given Jᵀ (n_elems × n_meas), R⁻¹'s diagonal r_inv and λ,
//   S = diag(√r_inv) Jᵀ,  M = SᵀS + λI (DSYRK),  M = LLᵀ (cuSOLVER DPOTRF),  M⁻¹ (DPOTRS on I),
//   H = diag(√r_inv) · S M⁻¹ (DGEMM) = R⁻¹Jᵀ(JR⁻¹Jᵀ + λI)⁻¹,
// the same steps as recon's Eigen version, so both agree to rounding. Device memory: two
// n_elems × n_meas double matrices plus two n_meas² ones (3.0 GB at 200,000 × 928).
// Jᵀ goes up and H comes down through a ring of pinned staging chunks (host copy of one chunk
// overlapping the DMA of the previous one), not through pageable memory.
// The CUDA context, cuBLAS and cuSOLVER handles, stream and pinned ring are made once per process
// (cuda_jac_warm_up, which `model build` calls on a background thread while it meshes) and kept
// until exit. Set-up only; the solves run one at a time (a mutex); throws std::runtime_error
// naming the step (no device, too little free device memory, M not positive definite, a CUDA,
// cuBLAS or cuSOLVER error). No CUDA header is needed to use this file.
#include <cstddef>

#include <Eigen/Core>

#include "eit/recon/model.hpp"

namespace eit::gpu {

// Where one solve's time went (host clock, the stream synchronised after each part).
struct JacSolveTimes {
  double init_ms = 0;      // context/handles made (or waited for) by this call; ~0 when warm
  double alloc_ms = 0;     // device buffers
  double upload_ms = 0;    // Jᵀ and √r_inv up
  double products_ms = 0;  // DGMM, DSYRK, DGEMM, DGMM
  double solve_ms = 0;     // DPOTRF + DPOTRS
  double convert_ms = 0;   // float(−H) row-major on the device (model form only)
  double download_ms = 0;  // H down
  double free_ms = 0;      // device buffers freed
  size_t upload_bytes = 0, download_bytes = 0;
};

struct JacSolveSettings {
  // Bytes per staging chunk; 0 = the ring's slot size (kJacStagingSlotBytes). Larger values are
  // cut to it. Tests use small odd sizes to cover partial chunks.
  size_t chunk_bytes = 0;
};
inline constexpr size_t kJacStagingSlotBytes = size_t{32} << 20;

// Makes the process's context, handles, stream and pinned staging ring if not made yet (any
// thread; concurrent callers wait for one creation). Throws what the solve would throw for them.
// Returns the milliseconds spent creating or waiting (about 0 when already warm).
double cuda_jac_warm_up();

Eigen::MatrixXd cuda_jac_diagonal_solve(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv,
                                        double lambda, const JacSolveSettings& settings = {},
                                        JacSolveTimes* times = nullptr);

// The same H in the streaming model's form (recon::Model::H): float(−H), row-major
// n_elems × n_meas, converted on the device, so only 4 bytes per value come down and the host
// neither holds a double H nor converts it. Bit-identical to float(−cuda_jac_diagonal_solve(…)).
recon::MatrixRowMajorF cuda_jac_diagonal_solve_model(const Eigen::MatrixXd& jt,
                                                     const Eigen::VectorXd& r_inv, double lambda,
                                                     const JacSolveSettings& settings = {},
                                                     JacSolveTimes* times = nullptr);

}  // namespace eit::gpu
