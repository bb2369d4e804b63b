// The positive-definite solves of the real and the complex Gauss–Newton step (gn_step.hpp), one
// refusal message for both.
#include <stdexcept>

#include <fmt/format.h>
#include <Eigen/Cholesky>

#include "gn_dense.hpp"
#include "gn_step.hpp"

namespace eit::recon::detail {
namespace {

[[noreturn]] void not_positive_definite(const char* what) {
  throw std::runtime_error(fmt::format("gn: {} is not positive definite", what));
}

}  // namespace

Eigen::VectorXd solve_positive_definite(Eigen::MatrixXd& a, const Eigen::VectorXd& b, int threads,
                                        const char* what) {
  if (!cholesky_in_place(a, threads)) not_positive_definite(what);
  return cholesky_solve(a, b);
}

Eigen::VectorXcd solve_positive_definite(const Eigen::MatrixXcd& a, const Eigen::VectorXcd& b,
                                         const char* what) {
  const Eigen::LLT<Eigen::MatrixXcd> llt(a);
  if (llt.info() != Eigen::Success) not_positive_definite(what);
  return llt.solve(b);
}

}  // namespace eit::recon::detail
