// The homogeneous fit behind gn's fitted start (gn_homogeneous_fit.hpp), and the scale invariance
// it buys: a frame in other units (v·k) gives σ/k, iterate for iterate.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>

#include <Eigen/Dense>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/gauss_newton.hpp"
#include "eit/recon/gn_homogeneous_fit.hpp"
#include "eit/recon/layered_circle_mesh.hpp"
#include "eit/recon/protocol.hpp"

using namespace eit::recon;

TEST_CASE("fit_homogeneous: σ₀, correlation and residual of a scaled, perturbed F(1)") {
  Eigen::VectorXd unit(4), noise(4);
  unit << 1, 2, -1, 3;
  noise << 2, -1, 0, 0;  // orthogonal to unit
  REQUIRE(unit.dot(noise) == 0);
  const Eigen::VectorXd v = unit / 4.0 + 0.1 * noise;
  const HomogeneousFit f = fit_homogeneous(unit, v);
  CHECK(f.scale == doctest::Approx(0.25).epsilon(1e-14));
  CHECK(f.sigma == doctest::Approx(4.0).epsilon(1e-14));
  const double cos = 0.25 * unit.norm() / v.norm();
  CHECK(f.correlation == doctest::Approx(cos).epsilon(1e-14));
  CHECK(f.residual == doctest::Approx(0.1 * noise.norm() / v.norm()).epsilon(1e-14));

  // Opposite polarity: correlation −cos, no conductivity.
  const HomogeneousFit g = fit_homogeneous(unit, Eigen::VectorXd(-v));
  CHECK(g.correlation == doctest::Approx(-cos).epsilon(1e-14));
  CHECK(g.scale == doctest::Approx(-0.25).epsilon(1e-14));
  CHECK(std::isnan(g.sigma));
  CHECK(std::isnan(fit_homogeneous(unit, Eigen::VectorXd(Eigen::VectorXd::Zero(4))).correlation));

  // Complex: v = F(1)/σ with σ complex comes back exactly.
  const std::complex<double> sigma(1.5, 0.6);
  const HomogeneousFitComplex c =
      fit_homogeneous(unit, Eigen::VectorXcd(unit.cast<std::complex<double>>() / sigma));
  CHECK(std::abs(c.sigma - sigma) < 1e-14);
  CHECK(c.residual < 1e-14);
}

TEST_CASE("gn_lambda_scale is σ₀^(4(p−1)) for the prior's exponent") {
  GnOptions o;
  o.prior = GnOptions::Prior::kKotre;
  o.p = 0.25;
  CHECK(gn_lambda_scale(o, 2.0) == doctest::Approx(std::pow(2.0, -3)).epsilon(1e-15));
  o.prior = GnOptions::Prior::kTikhonov;
  CHECK(gn_lambda_scale(o, 2.0) == doctest::Approx(std::pow(2.0, -4)).epsilon(1e-15));
  o.prior = GnOptions::Prior::kNoser;
  CHECK(gn_lambda_scale(o, 2.0) == doctest::Approx(0.25).epsilon(1e-15));
  o.prior = GnOptions::Prior::kLm;
  CHECK(gn_lambda_scale(o, 2.0) == 1.0);
  CHECK(gn_lambda_scale(o, std::nan("")) == 1.0);
  CHECK(gn_lambda_scale(o, -1.0) == 1.0);
}

TEST_CASE("gn fitted start: a frame in other units gives the same image, scaled") {
  // Point electrodes: F(k·σ) = F(σ)/k, so v·10⁻⁴ must give σ·10⁴ at every iterate. Before the
  // λ factor the 10⁻⁴ frame's first step ignored the prior (JᵀJ ~ 10¹⁶, R ~ 10⁴) and left σ > 0.
  const Mesh mesh = layered_circle_mesh(16, 4);
  ForwardModel forward(mesh, make_protocol({}));
  Eigen::VectorXd truth = Eigen::VectorXd::Constant(mesh.n_elems(), 2.0);
  for (int e = 0; e < mesh.n_elems(); e += 7) truth(e) = 3.0;
  const Eigen::VectorXd v = forward.solve(truth);
  for (const auto prior : {GnOptions::Prior::kKotre, GnOptions::Prior::kTikhonov}) {
    GnOptions o;
    o.prior = prior;
    o.start = GnOptions::Start::kFitted;
    o.max_iterations = 6;
    o.tolerance = 0;
    GaussNewton gn(mesh, forward.protocol(), {}, o);
    const GnResult a = gn.solve(v);
    const GnResult b = gn.solve(v * 1e-4);
    REQUIRE(a.status != GnStatus::kDiverged);
    REQUIRE(b.status != GnStatus::kDiverged);
    CHECK(a.iterations == b.iterations);
    CHECK((b.sigma * 1e-4 - a.sigma).norm() / a.sigma.norm() < 1e-9);
    // warm-started solves (streaming) keep the frame's scale too
    const GnResult c = gn.solve(v, a.sigma, 2), d = gn.solve(v * 1e-4, b.sigma, 2);
    CHECK((d.sigma * 1e-4 - c.sigma).norm() / c.sigma.norm() < 1e-9);
  }
}

// A frame the homogeneous model does not explain (a glitch of ±1e30 whose fit is tiny but
// positive) must keep λ as given: rescaling by its σ₀ would make λ ~1e40 and the garbage frame
// "converge" without moving (the CUDA solver did, where the CPU's fit came out exactly zero).
TEST_CASE("the fitted λ factor applies only when the fit explains the frame") {
  GnOptions o;
  o.prior = GnOptions::Prior::kKotre;
  o.p = 0.25;
  HomogeneousFit fit{1e-13, 1e13, 0.02, 1.0};  // tiny positive fit of a frame it does not explain
  CHECK(gn_lambda_scale(o, fit) == 1.0);
  fit.correlation = kGnMatchCorrelation;
  CHECK(gn_lambda_scale(o, fit) == doctest::Approx(std::pow(1e-13, -3)).epsilon(1e-12));
  HomogeneousFitComplex c{{2.0, 0.5}, {0.5, 0}, 0.99, 0.01};
  CHECK(gn_lambda_scale(o, c) == doctest::Approx(std::pow(std::abs(c.sigma), -3)).epsilon(1e-15));
  c.correlation = std::nan("");
  CHECK(gn_lambda_scale(o, c) == 1.0);
}
