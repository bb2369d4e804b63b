// Balanced mode at a slow paced rate: the idle reconstructor polls its queue in a window around
// each frame's expected arrival instead of sleeping through it, so a paced frame costs no thread
// wake-up (PipelineStats::frames_met_polling counts them). Idle mode never polls; neither does a
// fast rate (the window would cost more than 5 % of a core).
#include <doctest/doctest.h>

#include "eit/pipeline/arrival_window.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "pipeline_test_support.hpp"

using namespace eit::pipeline;
using eit::test::random_model;

namespace {

PipelineStats stream_at(double rate, size_t frames, LatencyMode mode) {
  const auto m = random_model(64);
  PipelineOptions o;
  o.stages = StageLayout::kPipelined;
  o.latency_mode = mode;
  return eit::test::run_paced(m, frames, rate, std::make_unique<CpuReconstructor>(m, CpuOptions{4}),
                              o);
}

}  // namespace

TEST_CASE("ArrivalWindow: the window brackets the next paced arrival, only at slow rates") {
  constexpr int64_t kMs = 1'000'000;
  ArrivalWindow w;
  CHECK(w.next().empty());
  w.note(100 * kMs);
  CHECK(w.next().empty());  // one arrival: no gap yet
  // 50 frames/s with ±30 µs of jitter.
  const int64_t jitter[] = {30'000, -30'000, 10'000, -20'000, 25'000, 0};
  int64_t t = 100 * kMs;
  for (int64_t j : jitter) {
    t += 20 * kMs;
    w.note(t + j);
  }
  const auto next = w.next();
  REQUIRE(!next.empty());
  const int64_t due = t + 20 * kMs;  // the next scheduled arrival
  CHECK(next.contains(due));
  CHECK(next.contains(due - 40'000));
  CHECK(next.contains(due + 40'000));
  CHECK_FALSE(next.contains(due - 1 * kMs));
  CHECK_FALSE(next.contains(due + 1 * kMs));
  CHECK(next.to - next.from == ArrivalWindow::kLeadNs + ArrivalWindow::kLagNs);

  // A pause (a lost second) restarts the prediction from the late frame; the mean gap stays.
  const int64_t period = w.period_ns();
  t += 1000 * kMs;
  w.note(t);
  CHECK(w.period_ns() == period);
  CHECK(w.next().contains(t + 20 * kMs));

  // 1 kHz: frames 1 ms apart keep the consumer busy; no window.
  ArrivalWindow fast;
  for (int i = 0; i < 10; ++i) fast.note(kMs * (1 + i));
  CHECK(fast.period_ns() == kMs);
  CHECK(fast.next().empty());
  // Stamps that do not move forward (0, repeated) are ignored.
  fast.note(0);
  fast.note(10 * kMs);
  CHECK(fast.period_ns() == kMs);
}

TEST_CASE("balanced, 100 Hz: the idle reconstructor is already polling when paced frames arrive") {
  const size_t frames = 40;
  const PipelineStats s = stream_at(100, frames, LatencyMode::kBalanced);
  MESSAGE("frames met polling: " << s.frames_met_polling << " of " << frames);
  // The first two frames give the mean gap. A quiet machine meets 34-38 of 40 frames; on a
  // loaded one a late timed wake-up or a late frame misses windows (5-7 of 40 seen at load 5),
  // so this checks that the polling is wired, not how often it wins.
  CHECK(s.frames_met_polling >= 1);
  CHECK(s.frames_met_polling <= frames);
}

TEST_CASE("idle mode and fast rates never poll ahead of a frame") {
  CHECK(stream_at(100, 20, LatencyMode::kIdle).frames_met_polling == 0);
  CHECK(stream_at(2000, 200, LatencyMode::kBalanced).frames_met_polling == 0);
}
