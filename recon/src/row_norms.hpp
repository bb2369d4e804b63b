#pragma once
// Internal: the squared norm of every row of a column-major matrix (diag(JᵀJ) of JAC's priors,
// from Jᵀ), split over threads by blocks of kRowBlock rows. Each row is summed exactly as Eigen's
// rowwise().squaredNorm() of the whole matrix sums it (blocks start at multiples of 64 rows, so
// the same rows take the vectorised path), so the result is bit-identical for every thread
// count. Threads are started and joined per call; small matrices stay on the caller's thread.
#include <Eigen/Core>

namespace eit::recon::detail {

inline constexpr Eigen::Index kRowBlock = 4096;

// threads ≤ 0 → every core.
Eigen::VectorXd row_squared_norms(const Eigen::MatrixXd& a, int threads);

}  // namespace eit::recon::detail
