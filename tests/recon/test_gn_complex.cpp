// Complex conductivity in Gauss–Newton (GaussNewton::solve_complex, recon/src/gn_forward.* with
// std::complex, gn_step_complex.cpp): the complex forward model against the real one and against
// finite differences, one step against the textbook (JᴴJ + λR)⁻¹Jᴴr for both normal-equation
// sizes, a noiseless complex phantom recovered, and a real frame giving the real solve's answer.
#include <doctest/doctest.h>

#include <complex>

#include <Eigen/Dense>

#include "../../recon/src/gn_forward.hpp"
#include "eit/recon/gauss_newton.hpp"
#include "eit/recon/layered_circle_mesh.hpp"
#include "eit/recon/protocol.hpp"
#include "gn_phantoms.hpp"

using namespace eit::recon;
using cd = std::complex<double>;

namespace {

// Background 2 + 0.5i, a disc of 4 + 2i at (0.4, 0.4) and one of 1 + 0.1i at (−0.4, −0.4).
Eigen::VectorXcd complex_phantom(const Mesh& mesh) {
  return eit::test::two_disc_phantom(mesh, cd(2.0, 0.5), cd(4.0, 2.0), cd(1.0, 0.1));
}

Eigen::VectorXcd simulate(const Mesh& mesh, const Protocol& protocol, const Eigen::VectorXcd& s) {
  detail::GnForwardComplex forward(mesh, protocol, {});
  REQUIRE(forward.set_conductivity(s));
  Eigen::VectorXcd v;
  forward.measurements(v);
  return v;
}

}  // namespace

TEST_CASE("gn complex forward: real σ gives the real model's v, J is −∂v/∂σ (holomorphic)") {
  const Mesh mesh = layered_circle_mesh(16, 3);
  const Protocol protocol = make_protocol({});
  Eigen::VectorXd real_sigma(mesh.n_elems());
  for (int e = 0; e < mesh.n_elems(); ++e) real_sigma(e) = 1.0 + 0.3 * std::cos(0.7 * e);
  detail::GnForward real(mesh, protocol, {});
  REQUIRE(real.set_conductivity(real_sigma));
  Eigen::VectorXd v_real;
  real.measurements(v_real);
  const Eigen::VectorXcd v_c = simulate(mesh, protocol, real_sigma.cast<cd>());
  CHECK(v_c.imag().norm() < 1e-12 * v_real.norm());
  CHECK((v_c.real() - v_real).norm() < 1e-10 * v_real.norm());

  Eigen::VectorXcd sigma = real_sigma.cast<cd>();
  sigma.array() += cd(0, 0.4);
  detail::GnForwardComplex forward(mesh, protocol, {});
  REQUIRE(forward.set_conductivity(sigma));
  Eigen::VectorXcd v0;
  forward.measurements(v0);
  Eigen::MatrixXcd jt;
  forward.jacobian_transposed(jt, detail::all_rows(protocol));
  for (int e : {0, mesh.n_elems() / 2, mesh.n_elems() - 1}) {
    for (cd h : {cd(1e-6, 0), cd(0, 1e-6)}) {  // both directions: the derivative is holomorphic
      Eigen::VectorXcd s = sigma;
      s(e) += h;
      const Eigen::VectorXcd dv = (simulate(mesh, protocol, s) - v0) / h;
      const Eigen::VectorXcd want = -jt.row(e).transpose();
      CAPTURE(e);
      CHECK((dv - want).norm() < 1e-4 * want.norm());
    }
  }
}

TEST_CASE("gn complex step equals (JᴴJ + λR)⁻¹Jᴴr through either normal-equation size") {
  for (int rings : {2, 6}) {  // 64 elements < 104 distinct rows, then 576 > 104
    CAPTURE(rings);
    const Mesh mesh = layered_circle_mesh(16, rings);
    const Protocol protocol = make_protocol({});
    const Eigen::VectorXcd v = simulate(mesh, protocol, complex_phantom(mesh));
    GnOptions o;
    o.max_iterations = 1;
    o.lambda0 = 0.3;
    o.start_value = 1.5;
    GaussNewton gn(mesh, protocol, {}, o);
    const GnComplexResult result = gn.solve_complex(v);
    REQUIRE(result.iterations == 1);

    const Eigen::VectorXcd x0 = Eigen::VectorXcd::Constant(mesh.n_elems(), cd(1.5, 0));
    detail::GnForwardComplex forward(mesh, protocol, {});
    REQUIRE(forward.set_conductivity(x0));
    Eigen::VectorXcd v0;
    forward.measurements(v0);
    Eigen::MatrixXcd jt;
    forward.jacobian_transposed(jt, detail::all_rows(protocol));
    const Eigen::MatrixXcd J = jt.transpose();
    const Eigen::MatrixXcd jhj = J.adjoint() * J;
    Eigen::MatrixXcd a = jhj;
    for (Eigen::Index e = 0; e < a.rows(); ++e) a(e, e) += 0.3 * std::pow(jhj(e, e).real(), 0.25);
    const Eigen::VectorXcd want = x0 - a.lu().solve(J.adjoint() * (v - v0));
    CHECK((result.sigma - want).norm() / want.norm() < 1e-10);
  }
}

TEST_CASE("gn complex: a noiseless complex phantom converges towards its σ") {
  const Mesh mesh = layered_circle_mesh(16, 6);
  const Protocol protocol = make_protocol({});
  const Eigen::VectorXcd truth = complex_phantom(mesh);
  const Eigen::VectorXcd v = simulate(mesh, protocol, truth);
  const GnOptions o = eit::test::noiseless_phantom_options();
  GaussNewton gn(mesh, protocol, {}, o);
  const Eigen::VectorXcd start = gn.start_for_complex(v);
  CHECK(std::abs(start(0).imag()) > 0.05);  // the fit already sees the imaginary background
  const GnComplexResult result = gn.solve_complex(v);
  REQUIRE(result.status != GnStatus::kDiverged);
  const double err_start = (start - truth).norm() / truth.norm();
  const double err_end = (result.sigma - truth).norm() / truth.norm();
  const double im_start = (start - truth).imag().norm() / truth.imag().norm();
  const double im_end = (result.sigma - truth).imag().norm() / truth.imag().norm();
  const double res_start = (simulate(mesh, protocol, start) - v).norm() / v.norm();
  const double res_end = (simulate(mesh, protocol, result.sigma) - v).norm() / v.norm();
  MESSAGE("image error ", err_start, " → ", err_end, " (imaginary part ", im_start, " → ", im_end,
          "), data residual ", res_start, " → ", res_end);
  CHECK(err_end < 0.6 * err_start);
  CHECK(im_end < 0.7 * im_start);
  CHECK(res_end < 0.05 * res_start);
}

TEST_CASE("gn complex: a real frame gives the real solve's σ with zero imaginary part") {
  const Mesh mesh = layered_circle_mesh(16, 4);
  const Protocol protocol = make_protocol({});
  const Eigen::VectorXcd vc = simulate(mesh, protocol, complex_phantom(mesh).real().cast<cd>());
  const Eigen::VectorXd v = vc.real();
  GnOptions o;
  o.lambda0 = 0.1;
  o.max_iterations = 5;
  GaussNewton gn(mesh, protocol, {}, o);
  const GnResult real = gn.solve(v);
  const GnComplexResult complex = gn.solve_complex(v.cast<cd>());
  CHECK(complex.iterations == real.iterations);
  CHECK(complex.sigma.imag().norm() < 1e-10 * real.sigma.norm());
  CHECK((complex.sigma.real() - real.sigma).norm() < 1e-9 * real.sigma.norm());
}
