// The threaded dense kernels of a Gauss–Newton step (recon/src/gn_dense.*) against Eigen's
// one-thread GEMM and LLT: A·Aᵀ and Aᵀ·A by row bands, the blocked Cholesky and its solve, for
// 1, 2 and 3 threads, sizes above and below the parallel threshold, and a matrix that is not
// positive definite.
#include <doctest/doctest.h>

#include <Eigen/Dense>

#include "../../recon/src/gn_dense.hpp"

using namespace eit::recon::detail;

namespace {

Eigen::MatrixXd lower_of(const Eigen::MatrixXd& m) {
  return m.triangularView<Eigen::Lower>().toDenseMatrix();
}

}  // namespace

TEST_CASE("gn dense: A·Aᵀ and Aᵀ·A lower triangles match a GEMM for any thread count") {
  for (auto [rows, cols] : {std::pair{40, 25}, std::pair{410, 300}, std::pair{300, 410}}) {
    const Eigen::MatrixXd a = Eigen::MatrixXd::Random(rows, cols);
    const Eigen::MatrixXd aat = a * a.transpose(), ata = a.transpose() * a;
    for (int threads : {1, 2, 3}) {
      CAPTURE(rows);
      CAPTURE(threads);
      Eigen::MatrixXd n;
      gram_lower(a, n, threads);
      REQUIRE(n.rows() == rows);
      CHECK((lower_of(n) - lower_of(aat)).norm() < 1e-12 * aat.norm());
      gram_lower_transposed(a, n, threads);
      REQUIRE(n.rows() == cols);
      CHECK((lower_of(n) - lower_of(ata)).norm() < 1e-12 * ata.norm());
    }
  }
}

TEST_CASE("gn dense: the blocked threaded Cholesky solves like Eigen's LLT") {
  for (int size : {30, 700}) {  // below and above the parallel threshold; 700 = 3 blocks + rest
    const Eigen::MatrixXd g = Eigen::MatrixXd::Random(size, size + 20);
    const Eigen::MatrixXd spd = g * g.transpose() + 0.5 * Eigen::MatrixXd::Identity(size, size);
    const Eigen::VectorXd b = Eigen::VectorXd::Random(size);
    const Eigen::VectorXd want = spd.llt().solve(b);
    const Eigen::MatrixXd l_want = spd.llt().matrixL();
    for (int threads : {1, 2, 3}) {
      CAPTURE(size);
      CAPTURE(threads);
      Eigen::MatrixXd l = spd;
      l.triangularView<Eigen::StrictlyUpper>().setConstant(1e300);  // only the lower is read
      REQUIRE(cholesky_in_place(l, threads));
      CHECK((lower_of(l) - l_want).norm() < 1e-10 * l_want.norm());
      CHECK((cholesky_solve(l, b) - want).norm() < 1e-9 * want.norm());
    }
  }
}

TEST_CASE("gn dense: an indefinite matrix is refused, not factorised") {
  for (int size : {30, 700}) {
    Eigen::MatrixXd m = Eigen::MatrixXd::Identity(size, size);
    m(size - 1, size - 1) = -1.0;  // the last pivot: found only in the last block
    for (int threads : {1, 2}) {
      Eigen::MatrixXd l = m;
      CHECK_FALSE(cholesky_in_place(l, threads));
    }
  }
}
