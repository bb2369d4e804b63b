#include "gn_step.hpp"

#include <cmath>

#include "element_laplacian.hpp"
#include "gn_dense.hpp"

namespace eit::recon::detail {

using Prior = GnOptions::Prior;

Eigen::VectorXd gn_diagonal_prior(const Eigen::MatrixXd& jt, const GnOptions& o) {
  if (o.prior == Prior::kTikhonov) return Eigen::VectorXd::Ones(jt.rows());
  return gn_prior_from_diagonal(jt.rowwise().squaredNorm(), o);
}

Eigen::VectorXd gn_prior_from_diagonal(const Eigen::VectorXd& d, const GnOptions& o) {
  if (o.prior == Prior::kTikhonov) return Eigen::VectorXd::Ones(d.size());
  const double exponent = o.prior == Prior::kKotre ? o.p : o.prior == Prior::kLm ? 1.0 : 0.5;
  Eigen::VectorXd r(d.size());
  for (Eigen::Index e = 0; e < d.size(); ++e) r(e) = std::pow(d(e), exponent);
  return r;
}

Eigen::VectorXd gn_step(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r, double lambda,
                        const GnOptions& o, const Mesh& mesh, GnStepTimes& times) {
  const Eigen::Index n_e = jt.rows(), n_m = jt.cols();
  GnStepTimer timer(times);
  if (o.prior == Prior::kLaplacian) {
    // JᵀJ + λLᵀL, n_elems-sized (LᵀL is singular, so there is no n_meas-sized push-through form
    // without a Woodbury correction; jac.cpp has that one for the one-step matrix).
    const Eigen::SparseMatrix<double> L = element_laplacian(mesh);
    const Eigen::SparseMatrix<double> ltl = L.transpose() * L;
    Eigen::MatrixXd n = Eigen::MatrixXd(ltl) * lambda;
    n.selfadjointView<Eigen::Lower>().rankUpdate(jt);
    const Eigen::VectorXd rhs = jt * r;
    timer.system_formed();
    Eigen::VectorXd d = solve_positive_definite(n, rhs, o.threads, "JᵀJ + λLᵀL");
    timer.solved();
    return d;
  }
  if (n_m <= n_e) {
    const Eigen::VectorXd prior = gn_diagonal_prior(jt, o);
    // (JᵀJ + λR)⁻¹Jᵀ = R⁻¹Jᵀ(JR⁻¹Jᵀ + λI)⁻¹ (push-through), n_meas-sized.
    const Eigen::VectorXd r_inv = prior.cwiseInverse();
    const Eigen::MatrixXd scaled = r_inv.cwiseSqrt().asDiagonal() * jt;
    Eigen::MatrixXd m;
    gram_lower_transposed(scaled, m, o.threads);  // lower triangle, rank-k update per thread band
    m.diagonal().array() += lambda;
    timer.system_formed();
    const Eigen::VectorXd y = solve_positive_definite(m, r, o.threads, "J R⁻¹ Jᵀ + λI");
    Eigen::VectorXd d = r_inv.cwiseProduct(jt * y);
    timer.solved();
    return d;
  }
  Eigen::MatrixXd n;
  gram_lower(jt, n, o.threads);  // JᵀJ, lower triangle only (half a GEMM), split over threads
  const Eigen::VectorXd prior = gn_prior_from_diagonal(n.diagonal(), o);  // diag(JᵀJ): no pass
  n.diagonal() += lambda * prior;
  const Eigen::VectorXd rhs = jt * r;
  timer.system_formed();
  Eigen::VectorXd d = solve_positive_definite(n, rhs, o.threads, "JᵀJ + λR");
  timer.solved();
  return d;
}

}  // namespace eit::recon::detail
