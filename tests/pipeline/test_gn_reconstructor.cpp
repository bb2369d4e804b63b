// GnReconstructor: absolute σ per element per frame from a "gn" model, warm-started streaming,
// and the per-frame faults (non-finite frame, divergence) flagged, counted and survived.
#include <doctest/doctest.h>

#include <limits>
#include <vector>

#include <complex>

#include "eit/pipeline/gn_reconstructor.hpp"
#include "gn_stream_support.hpp"
#include "eit/recon/forward_model.hpp"
#include "eit/recon/gn_model.hpp"
#include "eit/recon/layered_circle_mesh.hpp"

using namespace eit;
using eit::test::GnFrames;
using eit::test::run_one;

TEST_CASE("GnReconstructor streams absolute σ, warm-started, and survives bad frames") {
  const auto [mesh, protocol, model, truth, v] =
      eit::test::gn_phantom_case(eit::test::gn_streaming_options(12, 2));
  pipeline::GnReconstructor r(model);
  CHECK(r.n_out() == static_cast<size_t>(mesh.n_elems()));
  CHECK(r.n_meas() == protocol.n_meas());
  CHECK_THROWS_AS(r.set_reference(std::vector<double>(3, 1.0), false), std::invalid_argument);

  GnFrames f(5, r.n_meas(), r.n_out());
  for (size_t i = 0; i < 5; ++i) f.set(i, v);
  f.values[1][7] = std::numeric_limits<float>::quiet_NaN();
  for (size_t k = 0; k < f.values[3].size(); ++k)  // wildly inconsistent: the step leaves σ > 0
    f.values[3][k] = (k % 2 ? 1e30f : -1e30f);
  for (size_t i = 0; i < 5; ++i) run_one(r, f.slots[i]);

  const double err0 = (f.image(0) - truth).norm() / truth.norm();
  CHECK(err0 < 0.2);
  CHECK((f.slots[1].flags & pipeline::kFlagNonFinite) != 0);
  CHECK(f.image(1).norm() == 0);
  const double err2 = (f.image(2) - truth).norm() / truth.norm();
  CHECK(err2 <= err0 * 1.01);  // warm start from frame 0 keeps (or improves) the image
  CHECK((f.slots[3].flags & pipeline::kFlagDiverged) != 0);
  CHECK(f.image(3).minCoeff() > 0);  // the last good iterate, never σ ≤ 0
  CHECK((f.slots[4].flags & (pipeline::kFlagDiverged | pipeline::kFlagNonFinite)) == 0);
  CHECK((f.image(4) - truth).norm() / truth.norm() < 0.2);  // cold restart after divergence
  CHECK(r.counts().frames == 5);
  CHECK(r.counts().non_finite == 1);
  CHECK(r.counts().diverged == 1);
  CHECK(r.counts().iterations >= 12 + 2);
}

TEST_CASE("GnReconstructor refuses a model that is not 'gn'") {
  recon::Model m;
  m.algorithm = "jac";
  CHECK_THROWS_WITH_AS(pipeline::GnReconstructor{m}, doctest::Contains("expected a 'gn' model"),
                       std::invalid_argument);
}

TEST_CASE("GnReconstructor: a complex model takes (re, im) frames and writes (Re σ, Im σ) images") {
  const recon::Mesh mesh = recon::layered_circle_mesh(16, 3);
  const recon::Protocol protocol = recon::make_protocol({});
  recon::GnOptions o;
  o.start = recon::GnOptions::Start::kFitted;
  o.lambda0 = 0.1;
  o.max_iterations = 6;
  o.tolerance = 0;  // spend the whole budget
  o.frame_iterations = 2;
  o.complex_conductivity = true;
  const recon::Model model = recon::make_gn_model(mesh, protocol, {}, o);
  pipeline::GnReconstructor r(model, {1, -1, true});
  REQUIRE(r.n_meas() == 2 * protocol.n_meas());
  REQUIRE(r.n_out() == 2 * static_cast<size_t>(mesh.n_elems()));

  // A frame of the homogeneous admittivity 1.5 + 0.6i: σ comes back complex, near that value.
  recon::GaussNewton gn(mesh, protocol, {}, o);
  const std::complex<double> truth(1.5, 0.6);
  const Eigen::VectorXd unit_v = [&] {
    recon::ForwardModel f(mesh, protocol);
    return f.solve(Eigen::VectorXd::Ones(mesh.n_elems()));
  }();
  const Eigen::VectorXcd v = unit_v.cast<std::complex<double>>() / truth;  // F(σ·1) = F(1)/σ
  GnFrames frames(2, r.n_meas(), r.n_out());
  for (size_t i = 0; i < 2; ++i)
    for (Eigen::Index k = 0; k < v.size(); ++k) {
      frames.values[i][2 * static_cast<size_t>(k)] = static_cast<float>(v(k).real());
      frames.values[i][2 * static_cast<size_t>(k) + 1] = static_cast<float>(v(k).imag());
    }
  run_one(r, frames.slots[0]);
  run_one(r, frames.slots[1]);
  CHECK(r.counts().diverged == 0);
  CHECK(r.counts().iterations == 6 + 2);  // cold, then warm
  const Eigen::VectorXcd sent = v.cast<std::complex<float>>().cast<std::complex<double>>();
  const Eigen::VectorXcd want = gn.solve_complex(sent).sigma;
  for (Eigen::Index e = 0; e < want.size(); ++e) {
    CHECK(frames.images[0][2 * static_cast<size_t>(e)] ==
          doctest::Approx(want(e).real()).epsilon(1e-5));
    CHECK(frames.images[0][2 * static_cast<size_t>(e) + 1] ==
          doctest::Approx(want(e).imag()).epsilon(1e-5));
    CHECK(frames.images[1][2 * static_cast<size_t>(e)] == doctest::Approx(1.5).epsilon(1e-2));
    CHECK(frames.images[1][2 * static_cast<size_t>(e) + 1] == doctest::Approx(0.6).epsilon(1e-2));
  }
}

TEST_CASE("GnReconstructor refuses a complex model with a real-only solver, by name") {
  struct RealOnly final : pipeline::GnSolver {
    recon::GnResult solve(const Eigen::VectorXd&, const Eigen::VectorXd&, int) override {
      return {};
    }
    const recon::GnTimings& timings() const noexcept override { return t; }
    recon::GnTimings t;
  };
  const recon::Mesh mesh = recon::layered_circle_mesh(16, 2);
  recon::GnOptions o;
  o.complex_conductivity = true;
  const recon::Model model = recon::make_gn_model(mesh, recon::make_protocol({}), {}, o);
  CHECK_THROWS_WITH_AS(pipeline::GnReconstructor(model, {}, std::make_unique<RealOnly>(), "gpu-x"),
                       doctest::Contains("gpu-x: model"), std::invalid_argument);
  o.complex_conductivity = false;
  const recon::Model real = recon::make_gn_model(mesh, recon::make_protocol({}), {}, o);
  CHECK_NOTHROW(pipeline::GnReconstructor(real, {}, std::make_unique<RealOnly>(), "gpu-x"));
}
