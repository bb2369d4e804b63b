// GnReconstructor: absolute σ per element per frame from a "gn" model, warm-started streaming,
// and the per-frame faults (non-finite frame, divergence) flagged, counted and survived.
#include <doctest/doctest.h>

#include <limits>
#include <vector>

#include "eit/pipeline/gn_reconstructor.hpp"
#include "gn_stream_support.hpp"

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
