// Threaded dense kernels of a Gauss–Newton step (contract: gn_dense.hpp).
#include "gn_dense.hpp"

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include <Eigen/Cholesky>

namespace eit::recon::detail {
namespace {

using Eigen::Index;

// Row bands [b_t, b_t+1) of an n-row lower triangle, each holding about 1/threads of its area.
std::vector<Index> area_bands(Index n, int threads) {
  std::vector<Index> b(static_cast<size_t>(threads) + 1, 0);
  for (int t = 1; t < threads; ++t)
    b[static_cast<size_t>(t)] = std::clamp(
        static_cast<Index>(std::llround(static_cast<double>(n) * std::sqrt(double(t) / threads))),
        b[static_cast<size_t>(t) - 1], n);
  b[static_cast<size_t>(threads)] = n;
  return b;
}

// Runs fn(t) for t in [0, threads): t = 0 on the caller, the rest on fresh threads; joins all.
template <class Fn>
void run_split(int threads, Fn&& fn) {
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads) - 1);
  for (int t = 1; t < threads; ++t) pool.emplace_back([&fn, t] { fn(t); });
  fn(0);
  for (std::thread& th : pool) th.join();
}

// lower(out) = R·Rᵀ where rows(r0, h) is the h × k expression of R's rows r0 … r0+h-1.
template <class Rows>
void gram_bands(Index n, Index k, Rows rows, Eigen::MatrixXd& out, int threads) {
  out.resize(n, n);
  if (static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(k) / 2 <
      kMinParallelWork)
    threads = 1;
  const std::vector<Index> band = area_bands(n, threads);
  run_split(threads, [&](int t) {
    const Index r0 = band[static_cast<size_t>(t)], h = band[static_cast<size_t>(t) + 1] - r0;
    if (h == 0) return;
    if (r0 > 0) out.block(r0, 0, h, r0).noalias() = rows(r0, h) * rows(0, r0).transpose();
    auto diag = out.block(r0, r0, h, h);
    diag.setZero();
    diag.selfadjointView<Eigen::Lower>().rankUpdate(rows(r0, h));
  });
}

}  // namespace

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

void gram_lower(const Eigen::MatrixXd& a, Eigen::MatrixXd& n, int threads) {
  gram_bands(
      a.rows(), a.cols(), [&a](Index r0, Index h) { return a.middleRows(r0, h); }, n,
      resolve_threads(threads));
}

void gram_lower_transposed(const Eigen::MatrixXd& a, Eigen::MatrixXd& n, int threads) {
  gram_bands(
      a.cols(), a.rows(), [&a](Index r0, Index h) { return a.middleCols(r0, h).transpose(); }, n,
      resolve_threads(threads));
}

bool cholesky_in_place(Eigen::MatrixXd& a, int threads) {
  const Index n = a.rows();
  threads = resolve_threads(threads);
  const double nd = static_cast<double>(n);
  if (threads == 1 || nd * nd * nd / 3 < kMinParallelWork) {
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(a);  // in place, blocked, one thread
    return llt.info() == Eigen::Success;
  }
  constexpr Index kBlock = 192;
  for (Index k = 0; k < n; k += kBlock) {
    const Index b = std::min(kBlock, n - k), m = n - k - b;
    {
      Eigen::Ref<Eigen::MatrixXd> a11 = a.block(k, k, b, b);
      Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(a11);
      if (llt.info() != Eigen::Success) return false;
    }
    if (m == 0) break;
    const int team = static_cast<double>(m) * static_cast<double>(m) * static_cast<double>(b) / 2 <
                             kMinParallelWork
                         ? 1
                         : threads;
    // L21 = A21·L11⁻ᵀ: rows are independent, equal row bands.
    run_split(team, [&](int t) {
      const Index r0 = m * t / team, r1 = m * (t + 1) / team;
      if (r1 == r0) return;
      Eigen::Block<Eigen::MatrixXd> panel = a.block(k + b + r0, k, r1 - r0, b);
      a.block(k, k, b, b)
          .triangularView<Eigen::Lower>()
          .transpose()
          .solveInPlace<Eigen::OnTheRight>(panel);
    });
    // A22 -= L21·L21ᵀ (lower triangle), bands of equal area.
    const auto l21 = a.block(k + b, k, m, b);
    const std::vector<Index> band = area_bands(m, team);
    run_split(team, [&](int t) {
      const Index r0 = band[static_cast<size_t>(t)], h = band[static_cast<size_t>(t) + 1] - r0;
      if (h == 0) return;
      if (r0 > 0)
        a.block(k + b + r0, k + b, h, r0).noalias() -=
            l21.middleRows(r0, h) * l21.topRows(r0).transpose();
      a.block(k + b + r0, k + b + r0, h, h)
          .selfadjointView<Eigen::Lower>()
          .rankUpdate(l21.middleRows(r0, h), -1.0);
    });
  }
  return true;
}

Eigen::VectorXd cholesky_solve(const Eigen::MatrixXd& l, const Eigen::VectorXd& b) {
  Eigen::VectorXd x = l.triangularView<Eigen::Lower>().solve(b);
  l.triangularView<Eigen::Lower>().transpose().solveInPlace(x);
  return x;
}

}  // namespace eit::recon::detail
