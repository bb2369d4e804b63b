// The synthetic phantom's breathing option through the whole chain (FEM voltages → GREIT images →
// indices): the programmed rate comes back, the tidal variation scales with the programmed
// amplitude, and a lagging right lung shows as regional ventilation delay on the right.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/indices/indices_engine.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/recon/default_model.hpp"
#include "eit/recon/layered_circle_mesh.hpp"

using namespace eit;

namespace {

struct Result {
  std::vector<indices::BreathIndices> breaths;
  indices::BodyLayout layout;
};

Result run(const recon::Model& model, const recon::Mesh& mesh, acquisition::BreathingOptions b,
           double seconds) {
  acquisition::PhantomOptions po;
  po.rate_hz = 0;  // unpaced: frames as fast as read()
  po.snr_db = INFINITY;
  const double rate = 25;
  po.frames_per_revolution = static_cast<int>(std::lround(60.0 / b.breaths_per_min * rate));
  po.positions = b.positions;
  acquisition::SyntheticPhantomSource src(
      acquisition::make_breathing_table(mesh, model.protocol, b), po);
  pipeline::CpuReconstructor rec(model, pipeline::CpuOptions{1});
  const auto& h = src.table().homogeneous;
  std::vector<double> ref(h.data(), h.data() + h.size());
  rec.set_reference(ref, false);
  indices::IndicesOptions io;
  io.rate_hz = rate;
  indices::IndicesEngine engine(indices::BodyLayout::from_model(model), io);
  std::vector<float> values(src.n_values()), image(model.n_out());
  Result r{{}, indices::BodyLayout::from_model(model)};
  for (size_t k = 0; k < static_cast<size_t>(seconds * rate); ++k) {
    pipeline::FrameSlot slot;
    slot.values = values.data();
    slot.image = image.data();
    REQUIRE(src.read(slot, std::chrono::milliseconds(100)) == pipeline::ReadStatus::kFrame);
    pipeline::FrameSlot* batch[1] = {&slot};
    rec.submit(batch);
    rec.complete(batch, true);
    if (const auto* x = engine.push(image, k, 0)) r.breaths.push_back(*x);
  }
  return r;
}

}  // namespace

TEST_CASE("the breathing phantom returns its programmed rate, amplitude and regional delay") {
  const recon::Model model = recon::default_model();
  const recon::Mesh mesh = recon::layered_circle_mesh(16, 8);
  acquisition::BreathingOptions b;
  b.breaths_per_min = 30;
  b.conductivity_drop = 0.1;
  const auto small = run(model, mesh, b, 30);
  b.conductivity_drop = 0.2;
  b.right_delay_s = 0.2;
  const auto big = run(model, mesh, b, 30);
  REQUIRE(small.breaths.size() >= 10);
  REQUIRE(big.breaths.size() >= 10);
  for (const auto& x : small.breaths) CHECK(x.rate_per_min == doctest::Approx(30).epsilon(0.04));
  // Twice the conductivity drop, about twice the tidal variation (FEM is mildly nonlinear).
  const double ratio = big.breaths.back().tiv / small.breaths.back().tiv;
  CHECK(ratio > 1.8);
  CHECK(ratio < 2.4);
  CHECK(small.breaths.back().tiv > 0);  // sign: impedance rises on inspiration
  // The right lung (−x, low lateral %) reaches 40 % later than the left one.
  const auto& x = big.breaths.back();
  double right = 0, left = 0;
  size_t nr = 0, nl = 0;
  for (size_t i = 0; i < x.rvd.size(); ++i) {
    if (std::isnan(x.rvd[i])) continue;
    if (big.layout.lateral(i) < 0.4) right += x.rvd[i], ++nr;
    if (big.layout.lateral(i) > 0.6) left += x.rvd[i], ++nl;
  }
  REQUIRE(nr > 0);
  REQUIRE(nl > 0);
  const double lag_pct = right / nr - left / nl;
  const double programmed = 100 * 0.2 / x.inspiration_s;
  MESSAGE("RVD right − left: ", lag_pct, " % (programmed ", programmed, " %)");
  CHECK(lag_pct > 0.5 * programmed);
  CHECK(lag_pct < 1.5 * programmed);
  // Equal lungs at ~50 % horizontally with the delay removed.
  CHECK(small.breaths.back().cov_horizontal == doctest::Approx(50).epsilon(0.1));
}
