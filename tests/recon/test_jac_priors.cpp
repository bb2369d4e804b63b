// JAC priors against the textbook formula H = (JᵀJ + λR)⁻¹Jᵀ solved densely (small mesh only).
#include <doctest/doctest.h>

#include <Eigen/Cholesky>

#include "../../recon/src/element_laplacian.hpp"
#include "eit/recon/jac.hpp"
#include "pyeit_csv.hpp"
#include "recon_fixtures.hpp"

using namespace eit::recon;

namespace {

Eigen::MatrixXd dense_reference(const Eigen::MatrixXd& J, const Eigen::MatrixXd& R, double lambda) {
  const Eigen::MatrixXd a = J.transpose() * J + lambda * R;
  return a.ldlt().solve(J.transpose());
}

}  // namespace

TEST_CASE("diagonal priors (kotre, tikhonov, lm, noser) equal the dense n_elem formula") {
  const auto mesh = eit::test::pyeit_mesh_h01();
  if (!mesh) return;
  ForwardModel fwd(*mesh, make_protocol({}));
  const Eigen::MatrixXd J = fwd.jacobian();
  const Eigen::VectorXd d = J.colwise().squaredNorm().transpose();
  struct Case {
    JacOptions::Prior prior;
    Eigen::VectorXd r;
  };
  const Case cases[] = {{JacOptions::Prior::kKotre, d.array().pow(0.3).matrix()},
                        {JacOptions::Prior::kTikhonov, Eigen::VectorXd::Ones(d.size())},
                        {JacOptions::Prior::kLm, d},
                        {JacOptions::Prior::kNoser, d.cwiseSqrt()}};
  for (const Case& c : cases) {
    JacOptions o;
    o.prior = c.prior;
    o.p = 0.3;
    o.lambda = 0.02;
    const Eigen::MatrixXd ref = dense_reference(J, c.r.asDiagonal().toDenseMatrix(), o.lambda);
    const double err = eit::test::rel_fro_error(jac_matrix(J, o, *mesh), ref);
    MESSAGE(to_string(c.prior) << ": rel err " << err);
    CHECK(err < 1e-9);
  }
}

TEST_CASE("Laplacian prior (sparse Woodbury) equals the dense n_elem formula") {
  const auto mesh = eit::test::pyeit_mesh_h01();
  if (!mesh) return;
  ForwardModel fwd(*mesh, make_protocol({}));
  const Eigen::MatrixXd J = fwd.jacobian();
  const Eigen::MatrixXd L = detail::element_laplacian(*mesh).toDense();
  CHECK(L.rowwise().sum().cwiseAbs().maxCoeff() == 0.0);
  CHECK(L.diagonal().maxCoeff() == 3.0);
  for (double lambda : {1e-4, 1e-2}) {
    JacOptions o;
    o.prior = JacOptions::Prior::kLaplacian;
    o.lambda = lambda;
    const Eigen::MatrixXd ref = dense_reference(J, L.transpose() * L, lambda);
    const double err = eit::test::rel_fro_error(jac_matrix(J, o, *mesh), ref);
    MESSAGE("laplacian λ=" << lambda << ": rel err " << err);
    CHECK(err < 1e-8);
  }
}

TEST_CASE("prior names parse, and bad options are rejected with the value") {
  CHECK(parse_jac_prior("dgn") == JacOptions::Prior::kTikhonov);
  CHECK(parse_jac_prior("noser") == JacOptions::Prior::kNoser);
  CHECK_THROWS_WITH_AS(parse_jac_prior("ridge"), doctest::Contains("'ridge'"),
                       std::invalid_argument);
  JacOptions o;
  o.lambda = -1;
  Mesh empty;
  CHECK_THROWS_WITH_AS(jac_matrix(Eigen::MatrixXd::Ones(3, 3), o, empty),
                       doctest::Contains("lambda -1"), std::invalid_argument);
}

TEST_CASE("build_jac through diagonal_solve_to_model: the same model, no double H kept") {
  const auto mesh = eit::test::pyeit_mesh_h01();
  if (!mesh) return;
  ForwardModel fwd(*mesh, make_protocol({}));
  const Eigen::MatrixXd jt = fwd.jacobian_transposed();
  JacOptions o;
  o.p = 0.4;
  o.lambda = 0.02;
  const ReconstructionMatrix plain = build_jac(fwd, jt, o);
  int calls = 0;
  // The CPU solve, converted as the device does: float(−H) row-major.
  o.diagonal_solve_to_model = [&calls](const Eigen::MatrixXd& j, const Eigen::VectorXd& r_inv,
                                       double lambda) -> MatrixRowMajorF {
    ++calls;
    return (-jac_diagonal_solve_cpu(j, r_inv, lambda)).cast<float>();
  };
  const ReconstructionMatrix to_model = build_jac(fwd, jt, o);
  CHECK(calls == 1);
  CHECK(to_model.H.size() == 0);
  REQUIRE(to_model.model.H.rows() == plain.model.H.rows());
  REQUIRE(to_model.model.H.cols() == plain.model.H.cols());
  CHECK(to_model.model.H == plain.model.H);  // bit for bit
  CHECK(to_model.model.v_ref == plain.model.v_ref);
  CHECK(to_model.model.parameters_json == plain.model.parameters_json);

  // The Laplacian prior never calls it; a solve returning the wrong shape is an error.
  o.prior = JacOptions::Prior::kLaplacian;
  const ReconstructionMatrix lap = build_jac(fwd, jt, o);
  CHECK(calls == 1);
  CHECK(lap.H.rows() == jt.rows());
  o.prior = JacOptions::Prior::kKotre;
  o.diagonal_solve_to_model = [](const Eigen::MatrixXd& j, const Eigen::VectorXd&, double) {
    return MatrixRowMajorF(j.rows() - 1, j.cols());
  };
  CHECK_THROWS_WITH_AS(build_jac(fwd, jt, o), doctest::Contains("expected"), std::runtime_error);
  o.lambda = -1;  // checked before the solve, as on the double path
  CHECK_THROWS_WITH_AS(build_jac(fwd, jt, o), doctest::Contains("lambda -1 must be > 0"),
                       std::invalid_argument);
}
