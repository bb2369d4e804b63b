// JAC's n_meas-sized solve for the diagonal priors on this CPU, split over threads (jac.hpp).
// H = R⁻¹Jᵀ(JR⁻¹Jᵀ + λI)⁻¹ = (JᵀJ + λR)⁻¹Jᵀ for diagonal R (push-through identity).
// Both dense products are cut into fixed tiles that do not depend on the thread count:
//   M = JR⁻¹Jᵀ + λI  by column blocks of kGramCols columns of its lower triangle; each block
//                    sums its rank-kElemBlock updates over the elements in element order, as
//                    the one-block-at-a-time loop did (no scaled copy of J is held);
//   H = R⁻¹(Jᵀ M⁻¹)  by row blocks of kHRows elements, one GEMM each.
// Every tile is the same Eigen call whichever thread runs it and writes only its own block, so
// H is the same to the bit for every thread count. The 928 × 928 Cholesky and M⁻¹ stay on the
// caller's thread (well under a second at 928).
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <Eigen/Cholesky>

#include "eit/recon/jac.hpp"
#include "tile_runner.hpp"

namespace eit::recon {
namespace {

using Eigen::Index;

constexpr Index kElemBlock = 2048;  // elements per rank update of M
constexpr Index kGramCols = 128;    // columns of M per tile
constexpr Index kHRows = 2048;      // rows of H per tile

// M⁻¹ with M = J diag(r_inv) Jᵀ + λI.
Eigen::MatrixXd inverse_gram(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv, double lambda,
                             int threads) {
  const Index n_meas = jt.cols(), n_e = jt.rows();
  if (r_inv.size() != n_e)
    throw std::invalid_argument(
        fmt::format("jac: R⁻¹ has {} values, Jᵀ has {} rows", r_inv.size(), n_e));
  const Eigen::VectorXd r_sqrt = r_inv.cwiseSqrt();
  Eigen::MatrixXd m = Eigen::MatrixXd::Identity(n_meas, n_meas) * lambda;
  const Index tiles = (n_meas + kGramCols - 1) / kGramCols;
  // Column block [c0, c0 + w) of lower(M): its w × w diagonal block and the rows below it.
  detail::run_tiles(tiles, threads, [&](Index tile) {
    const Index c0 = tile * kGramCols, w = std::min(kGramCols, n_meas - c0), rest = n_meas - c0;
    Eigen::MatrixXd scaled(std::min(kElemBlock, n_e), rest);  // rows of R^-½ Jᵀ, columns c0…
    for (Index e0 = 0; e0 < n_e; e0 += kElemBlock) {
      const Index count = std::min(kElemBlock, n_e - e0);
      auto s = scaled.topRows(count);
      s = r_sqrt.segment(e0, count).asDiagonal() * jt.block(e0, c0, count, rest);
      m.block(c0, c0, w, w).selfadjointView<Eigen::Lower>().rankUpdate(s.leftCols(w).transpose());
      if (rest > w)
        m.block(c0 + w, c0, rest - w, w).noalias() +=
            s.rightCols(rest - w).transpose() * s.leftCols(w);
    }
  });
  const Eigen::LLT<Eigen::MatrixXd> llt(m);
  if (llt.info() != Eigen::Success)
    throw std::runtime_error("jac: J R⁻¹ Jᵀ + λI is not positive definite");
  return llt.solve(Eigen::MatrixXd::Identity(n_meas, n_meas));
}

// Calls store(r0, h_rows) for every row block of H = diag(r_inv)·Jᵀ·M⁻¹ (h_rows: count × n_meas).
template <class Store>
void h_by_row_blocks(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv,
                     const Eigen::MatrixXd& m_inv, int threads, Store&& store) {
  const Index n_e = jt.rows();
  detail::run_tiles((n_e + kHRows - 1) / kHRows, threads, [&](Index tile) {
    const Index r0 = tile * kHRows, count = std::min(kHRows, n_e - r0);
    store(r0, count, [&](auto&& h) {
      h.noalias() = jt.middleRows(r0, count) * m_inv;
      h.array().colwise() *= r_inv.segment(r0, count).array();
    });
  });
}

}  // namespace

Eigen::MatrixXd jac_diagonal_solve_cpu(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv,
                                       double lambda, int threads) {
  const Eigen::MatrixXd m_inv = inverse_gram(jt, r_inv, lambda, threads);
  Eigen::MatrixXd h(jt.rows(), jt.cols());
  h_by_row_blocks(jt, r_inv, m_inv, threads, [&h](Index r0, Index count, auto&& compute) {
    compute(h.middleRows(r0, count));
  });
  return h;
}

MatrixRowMajorF jac_diagonal_solve_cpu_model(const Eigen::MatrixXd& jt,
                                             const Eigen::VectorXd& r_inv, double lambda,
                                             int threads) {
  const Eigen::MatrixXd m_inv = inverse_gram(jt, r_inv, lambda, threads);
  MatrixRowMajorF h(jt.rows(), jt.cols());
  h_by_row_blocks(jt, r_inv, m_inv, threads, [&h](Index r0, Index count, auto&& compute) {
    Eigen::MatrixXd block(count, h.cols());  // double H of these rows, then float(−H)
    compute(block);
    h.middleRows(r0, count) = (-block).cast<float>();
  });
  return h;
}

}  // namespace eit::recon
