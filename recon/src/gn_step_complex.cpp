// The complex Gauss–Newton step (contract: gn_step.hpp). With A = Jᴴ = conj(Jᵀ) (n_elems × rows):
//   n_elems-sized   (A Aᴴ + λR) d = A r
//   rows-sized      d = R⁻¹ A (Aᴴ R⁻¹ A + λI)⁻¹ r   (push-through; diagonal R)
// Both matrices are Hermitian positive definite for λR > 0. One thread: the complex path is for
// correctness first; the real path (gn_step.cpp) is the fast one.
#include <cmath>

#include <Eigen/SparseCore>

#include "element_laplacian.hpp"
#include "gn_step.hpp"

namespace eit::recon::detail {

Eigen::VectorXcd gn_step_complex(const Eigen::MatrixXcd& jt, const Eigen::VectorXcd& r,
                                 double lambda, const GnOptions& o, const Mesh& mesh,
                                 GnStepTimes& times) {
  const Eigen::Index n_e = jt.rows(), n_m = jt.cols();
  GnStepTimer timer(times);
  const Eigen::MatrixXcd a = jt.conjugate();
  if (o.prior == GnOptions::Prior::kLaplacian) {
    const Eigen::SparseMatrix<double> L = element_laplacian(mesh);
    const Eigen::SparseMatrix<double> ltl = L.transpose() * L;
    Eigen::MatrixXcd n = (Eigen::MatrixXd(ltl) * lambda).cast<std::complex<double>>();
    n.noalias() += a * a.adjoint();
    const Eigen::VectorXcd rhs = a * r;
    timer.system_formed();
    Eigen::VectorXcd d = solve_positive_definite(n, rhs, "JᴴJ + λLᵀL");
    timer.solved();
    return d;
  }
  // diag(JᴴJ) = squared moduli summed along each row of Jᵀ: real and ≥ 0.
  const Eigen::VectorXd prior = gn_prior_from_diagonal(jt.rowwise().squaredNorm(), o);
  if (n_m <= n_e) {
    const Eigen::VectorXd r_inv = prior.cwiseInverse();
    const Eigen::MatrixXcd scaled = r_inv.cwiseSqrt().asDiagonal() * a;
    Eigen::MatrixXcd m = scaled.adjoint() * scaled;
    m.diagonal().array() += lambda;
    timer.system_formed();
    const Eigen::VectorXcd y = solve_positive_definite(m, r, "J R⁻¹ Jᴴ + λI");
    Eigen::VectorXcd d = r_inv.asDiagonal() * (a * y);
    timer.solved();
    return d;
  }
  Eigen::MatrixXcd n = a * a.adjoint();
  n.diagonal() += (lambda * prior).cast<std::complex<double>>();
  const Eigen::VectorXcd rhs = a * r;
  timer.system_formed();
  Eigen::VectorXcd d = solve_positive_definite(n, rhs, "JᴴJ + λR");
  timer.solved();
  return d;
}

}  // namespace eit::recon::detail
