// Frames missing from the input (seq jumps: drops of a live run, gaps of a recording) must not
// compress time: the engine fills them in (interpolated when short, invalid when long), so breath
// times and rates stay those of the breathing. Breaths up to --max-breath keep their pixel
// indices.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "breathing_images.hpp"
#include "eit/indices/indices_engine.hpp"

using namespace eit::indices;

namespace {

struct Outcome {
  std::vector<BreathIndices> breaths;
  uint64_t gap_frames = 0, unfilled = 0;
};

// Pushes the frames of `seconds` of breathing whose index k passes keep(k), with seq = k.
template <typename Keep>
Outcome run(const eit::test::Breathing& b, double seconds, Keep keep, IndicesOptions o = {}) {
  o.rate_hz = b.rate_hz;
  IndicesEngine e(BodyLayout::from_grid(b.grid()), o);
  Outcome out;
  std::vector<float> img;
  for (size_t k = 0; k < static_cast<size_t>(seconds * b.rate_hz); ++k) {
    if (!keep(k)) continue;
    b.frame(k, img);
    const auto t = static_cast<int64_t>(1e9 * static_cast<double>(k) / b.rate_hz);
    if (const auto* r = e.push(img, k, t)) out.breaths.push_back(*r);
  }
  while (const auto* r = e.finish()) out.breaths.push_back(*r);
  out.gap_frames = e.gap_frames();
  out.unfilled = e.unfilled_frames();
  return out;
}

}  // namespace

TEST_CASE("every fifth frame missing leaves the rate and breath times those of the breathing") {
  eit::test::Breathing b;
  b.rate_hz = 20;
  b.breaths_per_min = 15;
  const Outcome all = run(b, 60, [](size_t) { return true; });
  const Outcome gaps = run(b, 60, [](size_t k) { return k % 5 != 4; });
  REQUIRE(all.breaths.size() >= 10);
  // One frame in five (50 ms) is a short gap: interpolated, so no breath is lost either.
  CHECK(gaps.breaths.size() == all.breaths.size());
  CHECK(gaps.gap_frames == 1200 / 5 - 1);  // the last frame missing is no gap: nothing follows
  CHECK(gaps.unfilled == 0);
  for (const auto& x : gaps.breaths) {
    CHECK(x.rate_per_min == doctest::Approx(15).epsilon(0.05));
    // A start near a whole breath period (4 s) after the first valley at 0 s.
    const double periods = x.start_s / 4.0;
    CHECK(std::abs(periods - std::round(periods)) < 0.05);
    CHECK(x.start_seq == x.start);  // frame numbers count the missing frames too
  }
}

TEST_CASE("one long gap within the fill limit shifts nothing after it") {
  eit::test::Breathing b;
  b.rate_hz = 20;
  b.breaths_per_min = 12;
  const Outcome r = run(b, 90, [](size_t k) { return k < 400 || k >= 700; });  // 15 s missing
  CHECK(r.gap_frames == 300);
  for (const auto& x : r.breaths)  // the gap is invalid data: no breath spans it
    CHECK_FALSE((x.start_s < 35 && x.end_s > 20));
  bool after = false;
  for (const auto& x : r.breaths) {
    if (x.start_s < 36) continue;
    after = true;
    CHECK(x.rate_per_min == doctest::Approx(12).epsilon(0.05));
    const double periods = x.start_s / 5.0;
    CHECK(std::abs(periods - std::round(periods)) < 0.05);
  }
  CHECK(after);
}

TEST_CASE("a breath of fifteen seconds keeps its pixel indices at the default max breath") {
  eit::test::Breathing b;
  b.rate_hz = 10;
  b.breaths_per_min = 4;
  const Outcome r = run(b, 120, [](size_t) { return true; });
  REQUIRE(r.breaths.size() >= 4);
  for (const auto& x : r.breaths) {
    CHECK(x.rate_per_min == doctest::Approx(4).epsilon(0.05));
    CHECK(x.pixel_data);
  }
}

TEST_CASE("per-breath and detection options out of range are refused") {
  eit::test::Breathing b;
  auto make = [&](IndicesOptions o) {
    o.rate_hz = 20;
    IndicesEngine e(BodyLayout::from_grid(b.grid()), o);
  };
  IndicesOptions o;
  CHECK_NOTHROW(make(o));
  o.per_breath.rvd_threshold = 1.5;
  CHECK_THROWS_AS(make(o), std::invalid_argument);
  o = {};
  o.per_breath.rvd_threshold = -1;
  CHECK_THROWS_AS(make(o), std::invalid_argument);
  o = {};
  o.per_breath.lungspace_fraction = 0;
  CHECK_THROWS_AS(make(o), std::invalid_argument);
  o = {};
  o.per_breath.silent_fraction = 5;
  CHECK_THROWS_AS(make(o), std::invalid_argument);
  o = {};
  o.per_breath.trend_breaths = 1;
  CHECK_THROWS_AS(make(o), std::invalid_argument);
  o = {};
  o.breath.max_breath_s = 1e9;
  CHECK_THROWS_AS(make(o), std::invalid_argument);
  o = {};
  o.breath.averaging_window_s = 1e9;
  CHECK_THROWS_AS(make(o), std::invalid_argument);
}
