#include "eit/recon/jac.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <Eigen/LU>
#include <Eigen/SparseCholesky>

#include "element_laplacian.hpp"
#include "model_assembly.hpp"
#include "row_norms.hpp"
#include "sparse_ldlt_solve.hpp"

namespace eit::recon {
namespace {

using Prior = JacOptions::Prior;

// R's diagonal for the diagonal priors, from Jᵀ (n_elems × n_meas): diag(JᵀJ) = row norms².
Eigen::VectorXd diagonal_prior(const Eigen::MatrixXd& jt, const JacOptions& o) {
  if (o.prior == Prior::kTikhonov) return Eigen::VectorXd::Ones(jt.rows());
  const Eigen::VectorXd d = detail::row_squared_norms(jt, o.threads);  // 1.6 GB at 200k
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

// The diagonal priors: R⁻¹ from Jᵀ, then the n_meas-sized solve here or where o says.
Eigen::MatrixXd diagonal_prior_matrix(const Eigen::MatrixXd& jt, const JacOptions& o) {
  const Eigen::VectorXd r_inv = diagonal_prior(jt, o).cwiseInverse();
  if (!o.diagonal_solve) return jac_diagonal_solve_cpu(jt, r_inv, o.lambda, o.threads);
  Eigen::MatrixXd h = o.diagonal_solve(jt, r_inv, o.lambda);
  if (h.rows() != jt.rows() || h.cols() != jt.cols())
    throw std::runtime_error(fmt::format("jac: the solve returned H {} × {}, expected {} × {}",
                                         h.rows(), h.cols(), jt.rows(), jt.cols()));
  return h;
}

// The diagonal priors through JacOptions::diagonal_solve_to_model: the model's float H.
MatrixRowMajorF diagonal_prior_model_matrix(const Eigen::MatrixXd& jt, const JacOptions& o) {
  const Eigen::VectorXd r_inv = diagonal_prior(jt, o).cwiseInverse();
  MatrixRowMajorF h = o.diagonal_solve_to_model(jt, r_inv, o.lambda);
  if (h.rows() != jt.rows() || h.cols() != jt.cols())
    throw std::runtime_error(fmt::format("jac: the solve returned H {} × {}, expected {} × {}",
                                         h.rows(), h.cols(), jt.rows(), jt.cols()));
  return h;
}

void check_options(const JacOptions& o) {
  if (!(o.lambda > 0) || !std::isfinite(o.lambda))
    throw std::invalid_argument(fmt::format("jac: lambda {} must be > 0", o.lambda));
  if (!std::isfinite(o.p))
    throw std::invalid_argument(fmt::format("jac: p {} must be finite", o.p));
}

// R = LᵀL is singular (constants), so the n_meas-sized identity does not apply directly. With
// P = LᵀL + γ e₀e₀ᵀ (sparse, positive definite on a connected mesh):
//   JᵀJ + λLᵀL = λP + U C Uᵀ,  U = [Jᵀ e₀],  C = diag(I, −λγ),
// and Woodbury gives (JᵀJ + λLᵀL)⁻¹ U = Y S⁻¹ C⁻¹ with Y = (λP)⁻¹U, S = C⁻¹ + UᵀY, so
// H = Y · (first n_meas columns of S⁻¹). Cost: one sparse factorisation of size n_elem and
// n_meas + 1 solves; memory O(n_elem · n_meas).
Eigen::MatrixXd laplacian_prior_matrix(const Eigen::MatrixXd& jt, const JacOptions& o,
                                       const Mesh& mesh) {
  if (mesh.n_elems() != jt.rows())
    throw std::invalid_argument(
        fmt::format("jac laplacian prior: J has {} columns, mesh has {} "
                    "elements",
                    jt.rows(), mesh.n_elems()));
  const Eigen::SparseMatrix<double> L = detail::element_laplacian(mesh);
  Eigen::SparseMatrix<double> P = L.transpose() * L;
  const double gamma = P.diagonal().mean();
  P.coeffRef(0, 0) += gamma;
  const Eigen::SparseMatrix<double> scaled_p = P * o.lambda;
  const detail::SparseLdlt llt(scaled_p);
  if (llt.info() != Eigen::Success)
    throw std::runtime_error(
        "jac laplacian prior: LᵀL + γe₀e₀ᵀ is not positive definite (is the "
        "mesh connected?)");
  const Eigen::Index m = jt.cols(), n = jt.rows();
  Eigen::MatrixXd U(n, m + 1);
  U.leftCols(m) = jt;
  U.col(m).setZero();
  U(0, m) = 1.0;
  const Eigen::MatrixXd Y = detail::solve_many(llt, U);
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
  return jac_matrix_from_transposed(J.transpose(), o, mesh);
}

Eigen::MatrixXd jac_matrix_from_transposed(const Eigen::MatrixXd& jt, const JacOptions& o,
                                           const Mesh& mesh) {
  check_options(o);
  if (o.prior == Prior::kLaplacian) return laplacian_prior_matrix(jt, o, mesh);
  return diagonal_prior_matrix(jt, o);
}

ReconstructionMatrix build_jac(ForwardModel& forward, const JacOptions& o) {
  return build_jac(forward, forward.jacobian_transposed(o.perm, o.jac_normalized), o);
}

ReconstructionMatrix build_jac(ForwardModel& forward, const Eigen::MatrixXd& jt,
                               const JacOptions& o) {
  if (jt.rows() != forward.mesh().n_elems() ||
      jt.cols() != static_cast<Eigen::Index>(forward.protocol().n_meas()))
    throw std::invalid_argument(
        fmt::format("jac: Jᵀ is {} × {}, expected {} × {} (elements × measurements)", jt.rows(),
                    jt.cols(), forward.mesh().n_elems(), forward.protocol().n_meas()));
  ReconstructionMatrix out;
  const bool to_model = o.diagonal_solve_to_model && o.prior != Prior::kLaplacian;
  MatrixRowMajorF model_h;
  if (to_model) {
    check_options(o);
    model_h = diagonal_prior_model_matrix(jt, o);
  } else {
    out.H = jac_matrix_from_transposed(jt, o, forward.mesh());
  }
  const std::string params = fmt::format(
      R"({{"prior": "{}", "p": {}, "lambda": {}, "jac_normalized": {}, "normalize": {}, {}}})",
      to_string(o.prior), detail::json_number(o.p), detail::json_number(o.lambda), o.jac_normalized,
      o.normalize, detail::forward_json(forward.options()));
  const Mesh& mesh = forward.mesh();
  MeshGeometry geometry{mesh.nodes, mesh.elements, mesh.electrode_nodes,
                        MeshGeometry::OutputOn::kElements};
  out.model = to_model
                  ? detail::make_model("jac", params, std::move(model_h), forward.solve(o.perm),
                                       o.normalize, forward.protocol(), std::move(geometry))
                  : detail::make_model("jac", params, out.H, forward.solve(o.perm), o.normalize,
                                       forward.protocol(), std::move(geometry), o.threads);
  return out;
}

}  // namespace eit::recon
