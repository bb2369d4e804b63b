#include "sparse_ldlt_solve.hpp"

namespace eit::recon::detail {

Eigen::MatrixXd solve_many(const SparseLdlt& ldlt, const Eigen::MatrixXd& b) {
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  // A = Pᵀ L D Lᵀ P, L unit lower triangular stored by columns without its diagonal.
  RowMajor y = ldlt.permutationP() * b;
  const auto& L = ldlt.matrixL().nestedExpression();
  const Eigen::Index n = L.cols(), k = y.cols();
  const int* outer = L.outerIndexPtr();
  const int* inner = L.innerIndexPtr();
  const double* value = L.valuePtr();
  double* rows = y.data();
  for (Eigen::Index j = 0; j < n; ++j) {  // L y = P b
    const double* yj = rows + j * k;
    for (int p = outer[j]; p < outer[j + 1]; ++p) {
      double* yi = rows + static_cast<Eigen::Index>(inner[p]) * k;
      const double l = value[p];
      for (Eigen::Index c = 0; c < k; ++c) yi[c] -= l * yj[c];
    }
  }
  const Eigen::VectorXd& d = ldlt.vectorD();
  for (Eigen::Index j = 0; j < n; ++j) y.row(j) /= d(j);
  for (Eigen::Index j = n - 1; j >= 0; --j) {  // Lᵀ x = D⁻¹ y
    double* yj = rows + j * k;
    for (int p = outer[j]; p < outer[j + 1]; ++p) {
      const double* yi = rows + static_cast<Eigen::Index>(inner[p]) * k;
      const double l = value[p];
      for (Eigen::Index c = 0; c < k; ++c) yj[c] -= l * yi[c];
    }
  }
  return ldlt.permutationPinv() * y;
}

}  // namespace eit::recon::detail
