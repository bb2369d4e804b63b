// JAC's row norms over threads (recon/src/row_norms.hpp): bit-identical to Eigen's rowwise()
// squaredNorm() of the whole matrix for every thread count, on sizes that leave partial blocks
// and rows outside the vectorised path.
#include <doctest/doctest.h>

#include "../../recon/src/row_norms.hpp"

using eit::recon::detail::kRowBlock;
using eit::recon::detail::row_squared_norms;

TEST_CASE("row norms over threads equal Eigen's rowwise squaredNorm bit for bit") {
  for (const Eigen::Index rows : {Eigen::Index{1}, Eigen::Index{63}, 3 * kRowBlock + 1001}) {
    for (const Eigen::Index cols : {Eigen::Index{1}, Eigen::Index{7}, Eigen::Index{97}}) {
      const Eigen::MatrixXd a = Eigen::MatrixXd::Random(rows, cols);
      const Eigen::VectorXd reference = a.rowwise().squaredNorm();
      for (const int threads : {1, 2, 3, 7, 0}) {
        INFO(rows, " × ", cols, ", threads ", threads);
        const Eigen::VectorXd d = row_squared_norms(a, threads);
        REQUIRE(d.size() == rows);
        Eigen::Index differ = 0;
        for (Eigen::Index r = 0; r < rows; ++r) differ += d(r) != reference(r);
        CHECK(differ == 0);
      }
    }
  }
}
