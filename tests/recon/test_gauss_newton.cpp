// Gauss–Newton absolute imaging: pyEIT 1.2.4 JAC.gn reproduced iteration by iteration
// (../shared/data/pyeit/static_gn_16), both normal-equation sizes against the textbook formula,
// the two modes' stopping rules, divergence, and convergence to a noiseless phantom.
#include <doctest/doctest.h>

#include <cmath>

#include <Eigen/Dense>

#include "eit/recon/gauss_newton.hpp"
#include "eit/recon/layered_circle_mesh.hpp"
#include "eit/recon/mesh_io.hpp"
#include "eit/recon/protocol.hpp"
#include "gn_phantoms.hpp"
#include "pyeit_csv.hpp"
#include "test_data.hpp"

using namespace eit::recon;

namespace {

GnOptions pyeit_example_options() {
  GnOptions o;
  o.prior = GnOptions::Prior::kKotre;  // gn's own default; setup(method="lm") is ignored
  o.p = 0.25;
  o.lambda0 = 1.0;
  o.lambda_decay = 0.1;
  o.lambda_min = 1e-5;
  o.max_iterations = 20;
  o.tolerance = 1e-4;
  o.start_value = 1.0;
  o.pyeit_compat = true;
  return o;
}

// A conductive and a resistive disc on a background of 2.
Eigen::VectorXd two_disc_phantom(const Mesh& mesh) {
  return eit::test::two_disc_phantom(mesh, 2.0, 4.0, 1.0);
}

// d = (JᵀJ + λR)⁻¹ Jᵀ r spelled out densely, as pyEIT does.
Eigen::VectorXd textbook_step(const Eigen::MatrixXd& J, const Eigen::VectorXd& r, double lambda,
                              double p) {
  const Eigen::MatrixXd jtj = J.transpose() * J;
  const Eigen::VectorXd prior = jtj.diagonal().array().pow(p);
  Eigen::MatrixXd a = jtj;
  a.diagonal() += lambda * prior;
  return a.inverse() * (J.transpose() * r);
}

}  // namespace

TEST_CASE("gn pyEIT-compat reproduces every iteration of JAC.gn on static_gn_16 to 1e-8") {
  const auto nodes = eit::test::shared_data_file("pyeit/static_gn_16/nodes.csv");
  if (!nodes) return;
  const auto dir = nodes->parent_path();
  const Mesh mesh = load_mesh_csv_folder(dir);
  const Eigen::VectorXd v1 = eit::test::read_csv_vector(dir / "v1.csv");
  const Eigen::MatrixXd expected = eit::test::read_csv_matrix(dir / "x_iterations.csv");
  REQUIRE(expected.rows() == 20);
  REQUIRE(expected.cols() == mesh.n_elems());
  ForwardModel forward(mesh, make_protocol({}));
  GaussNewton gn(mesh, forward.protocol(), {}, pyeit_example_options());
  int seen = 0;
  double worst = 0;
  const GnResult result = gn.solve(v1, {}, -1, [&](int k, const Eigen::VectorXd& x) {
    const Eigen::VectorXd want = expected.row(k - 1).transpose();
    const double err = (x - want).norm() / want.norm();
    worst = std::max(worst, err);
    CHECK_MESSAGE(err < 1e-8, "iteration ", k, ": relative error ", err);
    ++seen;
  });
  MESSAGE("worst relative error over 20 iterations: ", worst);
  CHECK(seen == 20);
  CHECK(result.iterations == 20);
  CHECK(result.status == GnStatus::kIterationLimit);
}

TEST_CASE("gn step equals (JᵀJ + λR)⁻¹Jᵀr through either normal-equation size") {
  for (int rings : {2, 6}) {  // 64 elements < 208 measurements, then 576 > 208
    CAPTURE(rings);
    const Mesh mesh = layered_circle_mesh(16, rings);
    ForwardModel forward(mesh, make_protocol({}));
    const Eigen::VectorXd truth = two_disc_phantom(mesh);
    const Eigen::VectorXd v = forward.solve(truth);
    GnOptions o = pyeit_example_options();
    o.max_iterations = 1;
    o.lambda0 = 0.3;
    GaussNewton gn(mesh, forward.protocol(), {}, o);
    const GnResult result = gn.solve(v);
    REQUIRE(result.iterations == 1);
    const Eigen::VectorXd x0 = Eigen::VectorXd::Ones(mesh.n_elems());
    const Eigen::VectorXd r = v - forward.solve(x0);
    const Eigen::VectorXd want = x0 - textbook_step(forward.jacobian(x0), r, 0.3, 0.25);
    CHECK((result.sigma - want).norm() / want.norm() < 1e-10);
  }
}

TEST_CASE("gn compat drops the converging step, the default mode keeps it") {
  const Mesh mesh = layered_circle_mesh(16, 3);
  ForwardModel forward(mesh, make_protocol({}));
  const Eigen::VectorXd v = forward.solve(Eigen::VectorXd::Constant(mesh.n_elems(), 1.0));
  GnOptions o = pyeit_example_options();
  GaussNewton compat(mesh, forward.protocol(), {}, o);
  const GnResult a = compat.solve(v);
  CHECK(a.status == GnStatus::kConverged);
  CHECK(a.iterations == 0);  // pyEIT's gn returns None here
  o.pyeit_compat = false;
  GaussNewton fixed(mesh, forward.protocol(), {}, o);
  const GnResult b = fixed.solve(v);
  CHECK(b.status == GnStatus::kConverged);
  CHECK(b.iterations == 1);
  CHECK((b.sigma.array() - 1.0).abs().maxCoeff() < 1e-9);
}

TEST_CASE("gn compat's stop test divides by the scalar start, the default by ‖x_k‖") {
  const Mesh mesh = layered_circle_mesh(16, 3);  // 144 elements: ‖1‖ over elements = 12
  ForwardModel forward(mesh, make_protocol({}));
  // Data of σ = 1/1.001 everywhere: the full step from 1 is ≈ 1e-3 on every element, so
  // ‖d‖/‖x‖ ≈ 1e-3 passes a 3e-3 test while pyEIT's ‖d‖/|1| ≈ 1.2e-2 does not.
  const Eigen::VectorXd v = forward.solve() * 1.001;
  GnOptions o = pyeit_example_options();
  o.lambda0 = 1e-9;
  o.lambda_min = 1e-9;
  o.tolerance = 3e-3;
  o.max_iterations = 1;
  o.pyeit_compat = false;
  GaussNewton fixed(mesh, forward.protocol(), {}, o);
  const GnResult b = fixed.solve(v);
  CHECK(b.status == GnStatus::kConverged);
  CHECK(b.last_step == doctest::Approx(1e-3).epsilon(0.01));
  o.pyeit_compat = true;
  GaussNewton compat(mesh, forward.protocol(), {}, o);
  const GnResult a = compat.solve(v);
  CHECK(a.status == GnStatus::kIterationLimit);
  CHECK(a.last_step == doctest::Approx(12e-3).epsilon(0.01));
  CHECK((a.sigma - b.sigma).norm() < 1e-12);  // the same step, only the verdict differs
}

TEST_CASE("gn fitted start recovers a homogeneous conductivity in one solve") {
  const Mesh mesh = layered_circle_mesh(16, 4);
  ForwardModel forward(mesh, make_protocol({}));
  const Eigen::VectorXd v = forward.solve(Eigen::VectorXd::Constant(mesh.n_elems(), 3.7));
  GnOptions o;
  o.start = GnOptions::Start::kFitted;
  GaussNewton gn(mesh, forward.protocol(), {}, o);
  CHECK(gn.fit_homogeneous(v) == doctest::Approx(3.7).epsilon(1e-12));
  CHECK(std::isnan(gn.fit_homogeneous(-v)));
}

TEST_CASE("gn default mode converges towards a noiseless phantom") {
  const Mesh mesh = layered_circle_mesh(16, 6);
  ForwardModel forward(mesh, make_protocol({}));
  const Eigen::VectorXd truth = two_disc_phantom(mesh);
  const Eigen::VectorXd v = forward.solve(truth);
  const GnOptions o = eit::test::noiseless_phantom_options();
  GaussNewton gn(mesh, forward.protocol(), {}, o);
  const Eigen::VectorXd start = gn.start_for(v);
  const GnResult result = gn.solve(v);
  REQUIRE(result.status != GnStatus::kDiverged);
  const double err_start = (start - truth).norm() / truth.norm();
  const double err_end = (result.sigma - truth).norm() / truth.norm();
  const double res_start = (forward.solve(start) - v).norm() / v.norm();
  const double res_end = (forward.solve(result.sigma) - v).norm() / v.norm();
  MESSAGE("image error ", err_start, " → ", err_end, ", data residual ", res_start, " → ", res_end);
  CHECK(err_end < 0.6 * err_start);
  CHECK(res_end < 0.05 * res_start);
}

TEST_CASE("gn reports a diverging iterate and returns the last good one") {
  const Mesh mesh = layered_circle_mesh(16, 3);
  ForwardModel forward(mesh, make_protocol({}));
  const Eigen::VectorXd v = -forward.solve();  // no positive σ explains inverted data
  GnOptions o;
  o.lambda0 = 1e-6;
  GaussNewton gn(mesh, forward.protocol(), {}, o);
  const GnResult result = gn.solve(v);
  CHECK(result.status == GnStatus::kDiverged);
  CHECK(result.sigma.minCoeff() > 0);
  CHECK(result.sigma.allFinite());
}

TEST_CASE("gn options are checked by name") {
  const Mesh mesh = layered_circle_mesh(16, 2);
  ForwardModel forward(mesh, make_protocol({}));
  GnOptions o;
  o.max_iterations = 0;
  CHECK_THROWS_WITH_AS(GaussNewton(mesh, forward.protocol(), {}, o),
                       doctest::Contains("iterations = 0"), std::invalid_argument);
  o = {};
  o.start = GnOptions::Start::kPerElement;
  CHECK_THROWS_WITH_AS(GaussNewton(mesh, forward.protocol(), {}, o),
                       doctest::Contains("start_perm has 0 values"), std::invalid_argument);
  CHECK_THROWS_AS(parse_gn_start("warm"), std::invalid_argument);
}
