#include "eit/recon/jac.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <Eigen/SparseCholesky>

#include "element_laplacian.hpp"
#include "model_assembly.hpp"

namespace eit::recon {
namespace {

using Prior = JacOptions::Prior;

// R's diagonal for the diagonal priors.
Eigen::VectorXd diagonal_prior(const Eigen::MatrixXd& J, const JacOptions& o) {
  if (o.prior == Prior::kTikhonov) return Eigen::VectorXd::Ones(J.cols());
  const Eigen::VectorXd d = J.colwise().squaredNorm().transpose();
  const double exponent = o.prior == Prior::kKotre ? o.p : o.prior == Prior::kLm ? 1.0 : 0.5;
  Eigen::VectorXd r(d.size());
  for (Eigen::Index e = 0; e < d.size(); ++e) {
    r(e) = std::pow(d(e), exponent);
    if (!(r(e) > 0) || !std::isfinite(r(e)))
      throw std::invalid_argument(fmt::format(
          "jac {} prior: element {} has diag(JᵀJ) = {} (no sensitivity), so R is singular; use "
          "the tikhonov or laplacian prior",
          to_string(o.prior), e, d(e)));
  }
  return r;
}

// H = R⁻¹Jᵀ(JR⁻¹Jᵀ + λI)⁻¹ = (JᵀJ + λR)⁻¹Jᵀ for diagonal R (push-through identity).
Eigen::MatrixXd diagonal_prior_matrix(const Eigen::MatrixXd& J, const JacOptions& o) {
  const Eigen::VectorXd r_inv = diagonal_prior(J, o).cwiseInverse();
  const Eigen::MatrixXd j_scaled = J * r_inv.cwiseSqrt().asDiagonal();  // J R^-1/2
  Eigen::MatrixXd m = Eigen::MatrixXd::Identity(J.rows(), J.rows()) * o.lambda;
  m.selfadjointView<Eigen::Lower>().rankUpdate(j_scaled);  // + J R⁻¹ Jᵀ
  const Eigen::LLT<Eigen::MatrixXd> llt(m);
  if (llt.info() != Eigen::Success)
    throw std::runtime_error("jac: J R⁻¹ Jᵀ + λI is not positive definite");
  const Eigen::MatrixXd m_inv = llt.solve(Eigen::MatrixXd::Identity(J.rows(), J.rows()));
  return r_inv.asDiagonal() * (J.transpose() * m_inv);
}

// R = LᵀL is singular (constants), so the n_meas-sized identity does not apply directly. With
// P = LᵀL + γ e₀e₀ᵀ (sparse, positive definite on a connected mesh):
//   JᵀJ + λLᵀL = λP + U C Uᵀ,  U = [Jᵀ e₀],  C = diag(I, −λγ),
// and Woodbury gives (JᵀJ + λLᵀL)⁻¹ U = Y S⁻¹ C⁻¹ with Y = (λP)⁻¹U, S = C⁻¹ + UᵀY, so
// H = Y · (first n_meas columns of S⁻¹). Cost: one sparse factorisation of size n_elem and
// n_meas + 1 solves; memory O(n_elem · n_meas).
Eigen::MatrixXd laplacian_prior_matrix(const Eigen::MatrixXd& J, const JacOptions& o,
                                       const Mesh& mesh) {
  if (mesh.n_elems() != J.cols())
    throw std::invalid_argument(
        fmt::format("jac laplacian prior: J has {} columns, mesh has {} "
                    "elements",
                    J.cols(), mesh.n_elems()));
  const Eigen::SparseMatrix<double> L = detail::element_laplacian(mesh);
  Eigen::SparseMatrix<double> P = L.transpose() * L;
  const double gamma = P.diagonal().mean();
  P.coeffRef(0, 0) += gamma;
  Eigen::SimplicialLLT<Eigen::SparseMatrix<double>, Eigen::Lower, Eigen::AMDOrdering<int>> llt(
      P * o.lambda);
  if (llt.info() != Eigen::Success)
    throw std::runtime_error(
        "jac laplacian prior: LᵀL + γe₀e₀ᵀ is not positive definite (is the "
        "mesh connected?)");
  const Eigen::Index m = J.rows(), n = J.cols();
  Eigen::MatrixXd U(n, m + 1);
  U.leftCols(m) = J.transpose();
  U.col(m).setZero();
  U(0, m) = 1.0;
  const Eigen::MatrixXd Y = llt.solve(U);
  Eigen::MatrixXd S = U.transpose() * Y;
  S.topLeftCorner(m, m).diagonal().array() += 1.0;
  S(m, m) += -1.0 / (o.lambda * gamma);
  const Eigen::PartialPivLU<Eigen::MatrixXd> lu(S);
  const Eigen::MatrixXd s_inv_cols = lu.solve(Eigen::MatrixXd::Identity(m + 1, m));
  return Y * s_inv_cols;
}

}  // namespace

std::string_view to_string(JacOptions::Prior prior) noexcept {
  switch (prior) {
    case Prior::kKotre:
      return "kotre";
    case Prior::kTikhonov:
      return "tikhonov";
    case Prior::kLm:
      return "lm";
    case Prior::kNoser:
      return "noser";
    case Prior::kLaplacian:
      return "laplacian";
  }
  return "?";
}

JacOptions::Prior parse_jac_prior(std::string_view text) {
  if (text == "kotre") return Prior::kKotre;
  if (text == "tikhonov" || text == "dgn") return Prior::kTikhonov;
  if (text == "lm") return Prior::kLm;
  if (text == "noser") return Prior::kNoser;
  if (text == "laplacian") return Prior::kLaplacian;
  throw std::invalid_argument(
      fmt::format("jac prior '{}': expected kotre, tikhonov (dgn), lm, noser or laplacian", text));
}

Eigen::MatrixXd jac_matrix(const Eigen::MatrixXd& J, const JacOptions& o, const Mesh& mesh) {
  if (!(o.lambda > 0) || !std::isfinite(o.lambda))
    throw std::invalid_argument(fmt::format("jac: lambda {} must be > 0", o.lambda));
  if (!std::isfinite(o.p))
    throw std::invalid_argument(fmt::format("jac: p {} must be finite", o.p));
  if (o.prior == Prior::kLaplacian) return laplacian_prior_matrix(J, o, mesh);
  return diagonal_prior_matrix(J, o);
}

ReconstructionMatrix build_jac(ForwardModel& forward, const JacOptions& o) {
  ReconstructionMatrix out;
  out.H = jac_matrix(forward.jacobian(o.perm, o.jac_normalized), o, forward.mesh());
  const std::string params = fmt::format(
      R"({{"prior": "{}", "p": {}, "lambda": {}, "jac_normalized": {}, "normalize": {}, {}}})",
      to_string(o.prior), detail::json_number(o.p), detail::json_number(o.lambda), o.jac_normalized,
      o.normalize, detail::forward_json(forward.options()));
  const Mesh& mesh = forward.mesh();
  MeshGeometry geometry{mesh.nodes, mesh.elements, mesh.electrode_nodes,
                        MeshGeometry::OutputOn::kElements};
  out.model = detail::make_model("jac", params, out.H, forward.solve(o.perm), o.normalize,
                                 forward.protocol(), std::move(geometry));
  return out;
}

}  // namespace eit::recon
