#pragma once
// The n_meas-sized solve of JAC's diagonal priors on the GPU, in double (recon::JacOptions::
// DiagonalSolve): given Jᵀ (n_elems × n_meas), R⁻¹'s diagonal r_inv and λ,
//   S = diag(√r_inv) Jᵀ,  M = SᵀS + λI (DSYRK),  M = LLᵀ (cuSOLVER DPOTRF),  M⁻¹ (DPOTRS on I),
//   H = diag(√r_inv) · S M⁻¹ (DGEMM) = R⁻¹Jᵀ(JR⁻¹Jᵀ + λI)⁻¹,
// the same steps as recon's Eigen version, so both agree to rounding. Device memory: two
// n_elems × n_meas double matrices plus two n_meas² ones (3.0 GB at 200,000 × 928).
// Set-up only (any one thread at a time): allocates, synchronises, and throws std::runtime_error
// naming the step (no device, too little free device memory, M not positive definite, a CUDA,
// cuBLAS or cuSOLVER error). No CUDA header is needed to use this file.
#include <Eigen/Core>

namespace eit::gpu {

Eigen::MatrixXd cuda_jac_diagonal_solve(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv,
                                        double lambda);

}  // namespace eit::gpu
