#pragma once
// Internal: the dense kernels of a Gauss–Newton step, split over a few CPU threads with
// std::thread (no OpenMP, so no other Eigen product in the process changes threading):
//   gram_lower        N = A·Aᵀ (lower triangle only: a symmetric rank-k update, half a GEMM)
//   cholesky_in_place N = L·Lᵀ, blocked right-looking, the panel solve and the trailing
//                     rank-k update split over the threads
// Work is cut into row bands of equal lower-triangle area, one per thread; thread 0 is the
// caller. Below kMinParallelWork multiply-adds everything runs on the caller's thread (spawning
// costs ~20-50 µs a thread). Threads are started and joined per call; the caller blocks until all
// are done. Allocates only the thread objects. Not reentrant-sensitive: no shared state.
#include <Eigen/Core>

namespace eit::recon::detail {

inline constexpr double kMinParallelWork = 4e6;  // multiply-adds

// threads ≤ 0 → std::thread::hardware_concurrency().
int resolve_threads(int threads);

// lower(n) = a·aᵀ (n resized to a.rows()²; its strict upper triangle is left unspecified).
void gram_lower(const Eigen::MatrixXd& a, Eigen::MatrixXd& n, int threads);
// lower(n) = aᵀ·a (n resized to a.cols()²).
void gram_lower_transposed(const Eigen::MatrixXd& a, Eigen::MatrixXd& n, int threads);

// Overwrites n's lower triangle with L (n = L·Lᵀ, from n's lower triangle). False when n is not
// positive definite (n is then partly overwritten).
bool cholesky_in_place(Eigen::MatrixXd& n, int threads);

// Solves L·Lᵀ·x = b with L the lower triangle left by cholesky_in_place.
Eigen::VectorXd cholesky_solve(const Eigen::MatrixXd& l, const Eigen::VectorXd& b);

}  // namespace eit::recon::detail
