#include <doctest/doctest.h>

#include <chrono>
#include <limits>
#include <thread>

#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "pipeline_test_support.hpp"

using namespace eit::pipeline;
using eit::test::CollectingSink;
using eit::test::cpu_backend;
using eit::test::expected_image;
using eit::test::random_frames;
using eit::test::random_model;
using eit::test::VectorSource;
using eit::test::wait_finished;

namespace {

// A backend that fails after a number of frames, to exercise the fault path.
class FailingReconstructor final : public Reconstructor {
 public:
  FailingReconstructor(const eit::recon::Model& m, uint64_t fail_after)
      : inner_(m, {4}), fail_after_(fail_after) {}
  std::string_view name() const noexcept override { return "failing"; }
  size_t n_meas() const noexcept override { return inner_.n_meas(); }
  size_t n_out() const noexcept override { return inner_.n_out(); }
  size_t max_batch() const noexcept override { return 4; }
  size_t max_in_flight() const noexcept override { return 1; }
  void set_reference(std::span<const double> v, bool n) override { inner_.set_reference(v, n); }
  bool submit(std::span<FrameSlot* const> batch) override {
    if (frames_ + batch.size() > fail_after_) throw BackendError("simulated device lost");
    frames_ += batch.size();
    return inner_.submit(batch);
  }
  size_t complete(std::span<FrameSlot*> out, bool wait) override {
    return inner_.complete(out, wait);
  }
  size_t in_flight() const noexcept override { return inner_.in_flight(); }

 private:
  CpuReconstructor inner_;
  uint64_t fail_after_, frames_ = 0;
};

}  // namespace

TEST_CASE("lossless pipeline delivers every frame once, in order, equal to H·(v − v_ref)") {
  const auto m = random_model();
  const auto frames = random_frames(m, 3000);
  VectorSource source(frames);
  CollectingSink sink(m.n_out());
  PipelineOptions o;
  o.queue_capacity = 32;
  Pipeline p(m, source, cpu_backend(m), {&sink}, o);
  p.start();
  REQUIRE(wait_finished(p));
  const auto got = sink.frames();
  REQUIRE(got.size() == frames.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    REQUIRE(got[i].seq == i);
    REQUIRE(got[i].dropped_before == 0);
    worst = std::max(worst, eit::test::relative_error(
                                got[i].image, expected_image(m, frames[i], m.v_ref, false)));
  }
  CHECK(worst < 2e-5);
  CHECK(sink.stamps_out_of_order() == 0);
  const auto st = p.stats();
  CHECK(st.frames_in == frames.size());
  CHECK(st.frames_out == frames.size());
  CHECK(p.frames_out() == frames.size());  // the count alone, as run's stop-wait reads it
  CHECK(st.dropped() == 0);
  CHECK(st.latency[kSpanTotal].count == frames.size());
  CHECK(st.latency[kSpanReconstruct].p50_ns > 0);
  CHECK(st.input.high_water <= st.input.capacity);
  CHECK_FALSE(st.running);
}

TEST_CASE("lossless pipeline loses nothing behind a slow sink") {
  const auto m = random_model(256);
  const auto frames = random_frames(m, 400);
  VectorSource source(frames);
  CollectingSink sink(m.n_out());
  sink.slow(300);
  PipelineOptions o;
  o.queue_capacity = 4;
  Pipeline p(m, source, cpu_backend(m), {&sink}, o);
  p.start();
  REQUIRE(wait_finished(p));
  const auto got = sink.frames();
  REQUIRE(got.size() == frames.size());
  for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i].seq == i);
  CHECK(p.stats().dropped() == 0);
  CHECK(p.stats().output.high_water >= 2);  // the sink's queue really filled up
  CHECK(p.stats().sink_dropped() == 0);
}

TEST_CASE("live pipeline never blocks the source behind a stalled sink and counts its drops") {
  const auto m = random_model(256);
  const auto frames = random_frames(m, 5000);
  VectorSource source(frames);
  CollectingSink sink(m.n_out());
  sink.stall();
  PipelineOptions o;
  o.policy = Policy::kLive;
  o.queue_capacity = 8;
  Pipeline p(m, source, cpu_backend(m), {&sink}, o);
  p.start();
  // Every frame is read while the sink has not taken a single one.
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (source.delivered() < frames.size() && std::chrono::steady_clock::now() < limit)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  CHECK(source.delivered() == frames.size());
  CHECK(sink.count() == 0);
  sink.release();
  REQUIRE(wait_finished(p));
  const auto st = p.stats();
  const auto got = sink.frames();
  CHECK(st.frames_in == frames.size());
  CHECK(st.dropped() + st.sink_dropped() > 0);
  // Frames handed on reached the sink or were dropped in front of its own queue.
  REQUIRE(st.sink_queues.size() == 1);
  CHECK(st.frames_out == got.size() + st.sink_queues[0].queue.dropped);
  CHECK(st.sink_queues[0].delivered == got.size());
  CHECK(st.frames_in == st.frames_out + st.input.dropped + st.output.dropped);
  // Each delivered frame says exactly how many were dropped since the previous one.
  uint64_t previous = 0, reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const uint64_t gap = i == 0 ? got[i].seq : got[i].seq - previous - 1;
    REQUIRE(got[i].dropped_before == gap);
    reported += got[i].dropped_before;
    previous = got[i].seq;
  }
  CHECK(reported + (frames.size() - 1 - previous) == st.dropped() + st.sink_dropped());
}

TEST_CASE("a frame with NaN gets a zero image and is counted, its neighbours are unaffected") {
  const auto m = random_model(256);
  auto frames = random_frames(m, 50);
  frames[20][100] = std::numeric_limits<float>::quiet_NaN();
  frames[21][0] = -std::numeric_limits<float>::infinity();
  VectorSource source(frames);
  CollectingSink sink(m.n_out());
  Pipeline p(m, source, cpu_backend(m), {&sink});
  p.start();
  REQUIRE(wait_finished(p));
  const auto got = sink.frames();
  REQUIRE(got.size() == 50);
  CHECK(p.stats().non_finite == 2);
  for (size_t i = 0; i < got.size(); ++i) {
    const bool bad = i == 20 || i == 21;
    CHECK(((got[i].flags & kFlagNonFinite) != 0) == bad);
    if (bad)
      CHECK(std::all_of(got[i].image.begin(), got[i].image.end(), [](float x) { return x == 0; }));
    else
      CHECK(eit::test::relative_error(got[i].image, expected_image(m, frames[i], m.v_ref, false)) <
            2e-5);
  }
}

namespace {

// The mean of frames first … first + 9: the reference a capture of 10 frames takes from them.
Eigen::VectorXd mean_of_ten(const std::vector<std::vector<float>>& frames, size_t first) {
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(frames[first].size()));
  for (size_t i = first; i < first + 10; ++i)
    for (Eigen::Index k = 0; k < mean.size(); ++k)
      mean[k] += frames[i][static_cast<size_t>(k)] / 10.0;
  return mean;
}

// `frames` through the CPU pipeline with reference first:10 and normalised images.
struct CaptureRun {
  std::vector<eit::test::ReceivedFrame> images;
  PipelineStats stats;
};
CaptureRun run_capturing_ten(const eit::recon::Model& m,
                             const std::vector<std::vector<float>>& frames) {
  VectorSource source(frames);
  CollectingSink sink(m.n_out());
  PipelineOptions o;
  o.reference = {ReferenceMode::kCapture, 10, {}};
  o.normalize = 1;
  Pipeline p(m, source, cpu_backend(m), {&sink}, o);
  p.start();
  REQUIRE(wait_finished(p));
  return {sink.frames(), p.stats()};
}

}  // namespace

TEST_CASE("reference first:N is the mean of the first N frames, those frames carry the flag") {
  const auto m = random_model(256);
  const auto frames = random_frames(m, 60);
  const Eigen::VectorXd mean = mean_of_ten(frames, 0);
  const CaptureRun run = run_capturing_ten(m, frames);
  const auto& got = run.images;
  REQUIRE(got.size() == 60);
  for (size_t i = 0; i < 10; ++i) CHECK((got[i].flags & kFlagReference) != 0);
  double worst = 0;
  for (size_t i = 10; i < 60; ++i) {
    CHECK((got[i].flags & kFlagReference) == 0);
    worst = std::max(
        worst, eit::test::relative_error(got[i].image, expected_image(m, frames[i], mean, true)));
  }
  CHECK(worst < 1e-4);
  CHECK(run.stats.reference_captures == 1);
}

TEST_CASE("a captured reference the backend refuses is captured again, and the fault is told") {
  const auto m = random_model(256);
  auto frames = random_frames(m, 60);
  // Channel 3 reads 0 in the first 10 frames (electrodes settling): a reference taken from them
  // cannot normalise (|v_ref| = 0). The next 10 frames give one that can.
  for (size_t i = 0; i < 10; ++i) frames[i][3] = 0.0f;
  const Eigen::VectorXd mean = mean_of_ten(frames, 10);
  const CaptureRun run = run_capturing_ten(m, frames);
  const auto& got = run.images;
  REQUIRE(got.size() == 60);
  for (size_t i = 0; i < 20; ++i) CHECK((got[i].flags & kFlagReference) != 0);
  double worst = 0;
  for (size_t i = 20; i < 60; ++i)
    worst = std::max(
        worst, eit::test::relative_error(got[i].image, expected_image(m, frames[i], mean, true)));
  CHECK(worst < 1e-4);
  CHECK(run.stats.reference_captures == 2);
  CHECK(run.stats.error.find("captured reference rejected") == 0);
  CHECK(run.stats.error.find("capturing again") != std::string::npos);
}

TEST_CASE("a backend fault falls back to the CPU without losing or reordering frames") {
  const auto m = random_model(256);
  const auto frames = random_frames(m, 500);
  VectorSource source(frames);
  CollectingSink sink(m.n_out());
  Pipeline p(m, source, std::make_unique<FailingReconstructor>(m, 137), {&sink});
  p.start();
  REQUIRE(wait_finished(p));
  const auto got = sink.frames();
  REQUIRE(got.size() == frames.size());
  size_t fallback = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    REQUIRE(got[i].seq == i);
    fallback += (got[i].flags & kFlagBackendFallback) != 0;
    REQUIRE(eit::test::relative_error(got[i].image, expected_image(m, frames[i], m.v_ref, false)) <
            2e-5);
  }
  const auto st = p.stats();
  CHECK(st.backend_faults == 1);
  CHECK(st.backend == "cpu");
  CHECK(fallback == st.fallback_frames);
  CHECK(fallback >= frames.size() - 137);
  CHECK(st.error.find("simulated device lost") != std::string::npos);
}

TEST_CASE("a backend fault with the stop policy ends the run cleanly and counts lost frames") {
  const auto m = random_model(256);
  const auto frames = random_frames(m, 500);
  VectorSource source(frames);
  CollectingSink sink(m.n_out());
  PipelineOptions o;
  o.on_fault = FaultPolicy::kStop;
  Pipeline p(m, source, std::make_unique<FailingReconstructor>(m, 100), {&sink}, o);
  p.start();
  REQUIRE(wait_finished(p));
  const auto st = p.stats();
  CHECK(st.backend_faults == 1);
  CHECK(st.frames_out <= 100);
  CHECK(st.frames_in == st.frames_out + st.lost_on_fault);
  for (size_t i = 0; i < sink.frames().size(); ++i) CHECK(sink.frames()[i].seq == i);
}

TEST_CASE("request_stop in lossless mode still delivers every frame the source handed over") {
  const auto m = random_model(256);
  const auto frames = random_frames(m, 100000);
  VectorSource source(frames);
  CollectingSink sink(m.n_out());
  sink.slow(50);
  PipelineOptions o;
  o.queue_capacity = 64;
  Pipeline p(m, source, cpu_backend(m), {&sink}, o);
  p.start();
  while (sink.count() < 20) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  p.request_stop();
  REQUIRE(wait_finished(p));
  const auto st = p.stats();
  CHECK(st.frames_in < frames.size());
  CHECK(st.frames_out == st.frames_in);
  CHECK(sink.count() == st.frames_in);
}

TEST_CASE("set-up rejects a source whose frame length differs from the model's") {
  const auto m = random_model(64);
  VectorSource source(std::vector<std::vector<float>>(1, std::vector<float>(256)));
  CollectingSink sink(m.n_out());
  CHECK_THROWS_WITH_AS(Pipeline(m, source, cpu_backend(m), {&sink}),
                       doctest::Contains("delivers 256 values per frame, model random-test-model "
                                         "(random) expects 208 measurements"),
                       std::invalid_argument);
}

TEST_CASE("set-up rejects reference 'model' for a model without v_ref") {
  auto m = random_model(64);
  m.v_ref.resize(0);
  VectorSource source(random_frames(random_model(64), 2));
  CollectingSink sink(m.n_out());
  CHECK_THROWS_WITH_AS(Pipeline(m, source, std::make_unique<CpuReconstructor>(m.H), {&sink}),
                       doctest::Contains("has no v_ref"), std::invalid_argument);
}
