// The published image is checked, not only the measurements: a frame of finite but huge values
// (1e38) overflows float32 in H·(v − v_ref); the old pipeline published ±inf pixels with flags 0.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "pipeline_test_support.hpp"

using namespace eit::pipeline;
using eit::test::CollectingSink;
using eit::test::random_frames;
using eit::test::random_model;
using eit::test::VectorSource;
using eit::test::wait_finished;

TEST_CASE("a frame of finite 1e38 values publishes no inf pixel: zeros, flagged and counted") {
  const auto m = random_model(256);
  auto frames = random_frames(m, 40);
  std::fill(frames[15].begin(), frames[15].end(), 1e38f);  // finite, every value
  std::fill(frames[16].begin(), frames[16].end(), -1e38f);
  REQUIRE(
      std::all_of(frames[15].begin(), frames[15].end(), [](float x) { return std::isfinite(x); }));
  VectorSource source(frames);
  CollectingSink sink(m.n_out());
  Pipeline p(m, source, std::make_unique<CpuReconstructor>(m), {&sink});
  p.start();
  REQUIRE(wait_finished(p));
  const auto got = sink.frames();
  REQUIRE(got.size() == 40);
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    const bool all_finite = std::all_of(got[i].image.begin(), got[i].image.end(),
                                        [](float x) { return std::isfinite(x); });
    CHECK(all_finite);
    const bool huge = i == 15 || i == 16;
    CHECK(((got[i].flags & kFlagNonFinite) != 0) == huge);
    CHECK(((got[i].flags & kFlagImageOverflow) != 0) == huge);
    if (huge)
      CHECK(std::all_of(got[i].image.begin(), got[i].image.end(), [](float x) { return x == 0; }));
  }
  CHECK(p.stats().non_finite == 2);
}
