// Row norms over threads (row_norms.hpp).
#include "row_norms.hpp"

#include <algorithm>
#include <system_error>
#include <thread>
#include <vector>

#include "gn_dense.hpp"

namespace eit::recon::detail {

Eigen::VectorXd row_squared_norms(const Eigen::MatrixXd& a, int threads) {
  const Eigen::Index n = a.rows();
  Eigen::VectorXd out(n);
  const Eigen::Index blocks = (n + kRowBlock - 1) / kRowBlock;
  // A block reads kRowBlock · cols doubles: ≥ 32 KB a column, far above a thread's start.
  const int team = static_cast<int>(std::min<Eigen::Index>(blocks, resolve_threads(threads)));
  // Thread t takes blocks t, t + team, …
  const auto worker = [&](int t) {
    for (Eigen::Index b = t; b < blocks; b += team) {
      const Eigen::Index r0 = b * kRowBlock, count = std::min(kRowBlock, n - r0);
      out.segment(r0, count) = a.middleRows(r0, count).rowwise().squaredNorm();
    }
  };
  std::vector<std::thread> pool;
  std::vector<int> own;  // parts whose thread could not be started: done here
  for (int t = 1; t < team; ++t) {
    try {
      pool.emplace_back(worker, t);
    } catch (const std::system_error&) {
      own.push_back(t);
    }
  }
  worker(0);
  for (int t : own) worker(t);
  for (std::thread& th : pool) th.join();
  return out;
}

}  // namespace eit::recon::detail
