// GnReconstructor checks each cold-started frame against the model's homogeneous voltages F(1):
// a frame of the model's polarity matches, an inverted one (EIDORS convention) is counted as
// mismatched with its correlation, which `reconstruct` prints (tools/src/gn_summary.cpp).
#include <doctest/doctest.h>

#include <cmath>

#include "eit/pipeline/gn_reconstructor.hpp"
#include "gn_stream_support.hpp"

using namespace eit;
using eit::test::GnFrames;
using eit::test::run_one;

TEST_CASE("GnReconstructor counts cold frames that do not match F(1), with the first fit") {
  const auto c = eit::test::gn_phantom_case(eit::test::gn_streaming_options(4, 2));
  pipeline::GnReconstructor r(c.model);
  CHECK(r.counts().fitted == 0);
  CHECK(std::isnan(r.counts().first_fit.correlation));

  // Frames 0 and 1 in the model's polarity, in units 10³ times larger (σ 10³ times larger);
  // frames 2 and 3 inverted, as EIDORS-convention recordings come.
  GnFrames f(4, r.n_meas(), r.n_out());
  for (size_t i = 0; i < 4; ++i) f.set(i, (i < 2 ? 1e-3 : -1e-3) * c.v);
  run_one(r, f.slots[0]);
  const pipeline::GnFrameCounts& n = r.counts();
  CHECK(n.fitted == 1);
  CHECK(n.mismatched == 0);
  CHECK(n.first_fit.correlation > 0.99);
  CHECK(n.first_fit.sigma > 1.5e3);  // about the phantom's background 2, ×10³
  CHECK(n.first_fit.sigma < 3e3);
  CHECK(n.first_fit.residual < 0.1);
  run_one(r, f.slots[1]);  // warm-started: not fitted again
  CHECK(n.fitted == 1);
  CHECK(n.diverged == 0);

  // Every frame cold: each is fitted, the inverted ones counted, the first fit kept.
  pipeline::GnReconstructor cold(c.model, {16, -1, false});
  for (auto& slot : f.slots) run_one(cold, slot);
  const pipeline::GnFrameCounts& m = cold.counts();
  CHECK(m.fitted == 4);
  CHECK(m.mismatched == 2);
  CHECK(m.first_fit.correlation > 0.99);
}
