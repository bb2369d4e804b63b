// Per-sink queues: each sink has its own bounded queue and thread; a stalled live sink costs only
// itself frames (counted per sink), a blocking sink gets every frame in order, and the two stage
// layouts (pipelined, run to completion) behave the same.
#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/paced_source.hpp"
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

// Each delivered frame's dropped_before equals the frames missing before it by seq.
void check_drop_accounting(const std::vector<eit::test::ReceivedFrame>& got) {
  uint64_t previous = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const uint64_t gap = i == 0 ? got[i].seq : got[i].seq - previous - 1;
    REQUIRE(got[i].dropped_before == gap);
    previous = got[i].seq;
  }
}

// Notes 'p' for each publish() and 'h' for each take_handoff() (which says yes, as a publisher
// whose deferring I/O threads wait for the sink thread to yield does).
class HandoffNotingSink final : public ImageSink {
 public:
  std::string_view name() const noexcept override { return "handoff"; }
  void publish(const FrameSlot&) noexcept override { note('p'); }
  bool take_handoff() noexcept override {
    note('h');
    return true;
  }
  SinkStats stats() const noexcept override { return {}; }
  std::string calls() const {
    const std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  void note(char c) {
    const std::lock_guard lock(mutex_);
    calls_.push_back(c);
  }
  mutable std::mutex mutex_;
  std::string calls_;
};

}  // namespace

TEST_CASE("the sink thread asks its sink for a hand-over right after each publish") {
  for (StageLayout layout : {StageLayout::kPipelined, StageLayout::kRunToCompletion}) {
    CAPTURE(layout_name(layout));
    const auto m = random_model(64);
    const auto frames = random_frames(m, 300);
    VectorSource source(frames);
    HandoffNotingSink sink;
    PipelineOptions o;
    o.stages = layout;
    o.policy = Policy::kLossless;
    Pipeline p(m, source, cpu_backend(m), {&sink}, o);
    p.start();
    REQUIRE(wait_finished(p));
    std::string expected;
    for (size_t i = 0; i < frames.size(); ++i) expected += "ph";
    CHECK(sink.calls() == expected);
  }
}

TEST_CASE("a stalled live sink loses frames alone: the other sink and the source never wait") {
  for (StageLayout layout : {StageLayout::kPipelined, StageLayout::kRunToCompletion}) {
    CAPTURE(layout_name(layout));
    const auto m = random_model(256);
    const auto frames = random_frames(m, 2000);
    VectorSource inner(frames);
    PacedSource source(inner, {4000, 1});  // paced, so the CPU keeps up on a loaded machine
    CollectingSink stalled(m.n_out()), lively(m.n_out());
    stalled.stall();
    PipelineOptions o;
    o.policy = Policy::kLive;
    o.queue_capacity = 64;
    o.sink_queue_capacity = 8;
    o.stages = layout;
    Pipeline p(m, source, cpu_backend(m), {&stalled, &lively}, o);
    CHECK(p.layout() == layout);
    p.start();
    // The whole stream goes through while the stalled sink has not returned from its first call.
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (inner.delivered() < frames.size() && std::chrono::steady_clock::now() < limit)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const auto handed_on = [&] {
      const auto st = p.stats();
      return st.sink_queues[1].delivered + st.sink_queues[1].queue.dropped;
    };
    while (handed_on() < p.stats().frames_out && std::chrono::steady_clock::now() < limit)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    CHECK(inner.delivered() == frames.size());
    CHECK(stalled.count() == 0);
    // The lively sink went on far past what the stalled one's queue could hold. (It may drop a
    // few itself when this loaded machine deschedules its thread: live policy, counted.)
    CHECK(lively.count() > 10 * (o.sink_queue_capacity + 1));
    stalled.release();
    REQUIRE(wait_finished(p));

    const auto st = p.stats();
    REQUIRE(st.sink_queues.size() == 2);
    const auto& q_stalled = st.sink_queues[0];
    const auto& q_lively = st.sink_queues[1];
    CHECK_FALSE(q_stalled.blocks);
    CHECK(q_stalled.queue.dropped > q_lively.queue.dropped);
    // (After release the stalled sink also gets frames fanned out later, so its count has no
    // fixed bound; every frame handed on is accounted for below.)
    CHECK(stalled.count() + q_stalled.queue.dropped == st.frames_out);
    CHECK(lively.count() + q_lively.queue.dropped == st.frames_out);
    CHECK(q_stalled.delivered == stalled.count());
    CHECK(q_lively.delivered == lively.count());
    CHECK(st.sink_dropped() == q_stalled.queue.dropped + q_lively.queue.dropped);
    CHECK(st.layout == layout_name(layout));
    // Each sink has its own thread, neither of them the caller's.
    CHECK(stalled.publisher_thread() != lively.publisher_thread());
    CHECK(stalled.publisher_thread() != std::this_thread::get_id());
    // Each sink's frames say how many that sink missed (its own drops plus the pipeline's).
    const auto got_stalled = stalled.frames(), got_lively = lively.frames();
    check_drop_accounting(got_stalled);
    check_drop_accounting(got_lively);
    for (size_t i = 0; i < got_lively.size(); ++i) {
      const auto& f = got_lively[i];
      REQUIRE(eit::test::relative_error(f.image, expected_image(m, frames[f.seq], m.v_ref, false)) <
              2e-5);
    }
  }
}

TEST_CASE("a blocking sink gets every frame in order while a stalled live sink drops its own") {
  const auto m = random_model(256);
  const auto frames = random_frames(m, 1500);
  VectorSource inner(frames);
  PacedSource source(inner, {3000, 1});
  CollectingSink stalled(m.n_out());
  CollectingSink recorder(m.n_out(), SinkPolicy::kBlock);
  recorder.slow(
      500);  // slower than the frames come (333 µs apart): its queue fills, the fan-out waits
  // Held at first until its queue is full, so the fan-out surely waits on it however slow the
  // rest of the pipeline runs (under ThreadSanitizer on 2 loaded cores the 500 µs alone did not
  // fill it: high water 3 of 16).
  recorder.stall();
  stalled.stall();
  PipelineOptions o;
  o.policy = Policy::kLive;
  o.queue_capacity = 4096;  // room for the whole burst: the source never drops
  o.sink_queue_capacity = 16;
  Pipeline p(m, source, cpu_backend(m), {&stalled, &recorder}, o);
  p.start();
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (p.stats().sink_queues.at(1).queue.high_water < o.sink_queue_capacity &&
         std::chrono::steady_clock::now() < limit)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  recorder.release();
  while (recorder.count() < frames.size() && std::chrono::steady_clock::now() < limit)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  CHECK(stalled.count() == 0);
  stalled.release();
  REQUIRE(wait_finished(p));
  const auto st = p.stats();
  const auto got = recorder.frames();
  REQUIRE(got.size() == frames.size());
  for (size_t i = 0; i < got.size(); ++i) {
    REQUIRE(got[i].seq == i);
    REQUIRE(got[i].dropped_before == 0);
  }
  REQUIRE(st.sink_queues.size() == 2);
  CHECK(st.sink_queues[1].blocks);
  CHECK(st.sink_queues[1].queue.dropped == 0);
  CHECK(st.sink_queues[1].queue.high_water == st.sink_queues[1].queue.capacity);
  CHECK(st.sink_queues[0].queue.dropped == frames.size() - stalled.count());
  CHECK(st.dropped() == 0);
}

TEST_CASE("a lossless pipeline makes every sink queue wait, whatever the sink's own policy") {
  const auto m = random_model(128);
  const auto frames = random_frames(m, 600);
  VectorSource source(frames);
  CollectingSink a(m.n_out()), b(m.n_out());
  a.slow(200);
  PipelineOptions o;
  o.sink_queue_capacity = 4;
  Pipeline p(m, source, cpu_backend(m), {&a, &b}, o);
  p.start();
  REQUIRE(wait_finished(p));
  const auto st = p.stats();
  CHECK(st.sink_queues[0].blocks);
  CHECK(st.sink_queues[1].blocks);
  CHECK(a.count() == frames.size());
  CHECK(b.count() == frames.size());
  CHECK(st.sink_dropped() == 0);
}

TEST_CASE("run to completion computes what the pipelined layout computes, frame for frame") {
  const auto m = random_model(512);
  const auto frames = random_frames(m, 800);
  std::vector<std::vector<eit::test::ReceivedFrame>> results;
  for (StageLayout layout : {StageLayout::kPipelined, StageLayout::kRunToCompletion}) {
    VectorSource source(frames);
    CollectingSink sink(m.n_out());
    PipelineOptions o;
    o.stages = layout;
    o.reference = {ReferenceMode::kCapture, 5, {}};
    Pipeline p(m, source, cpu_backend(m), {&sink}, o);
    p.start();
    REQUIRE(wait_finished(p));
    CHECK(p.stats().reference_captures == 1);
    results.push_back(sink.frames());
  }
  REQUIRE(results[0].size() == frames.size());
  REQUIRE(results[1].size() == frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    REQUIRE(results[1][i].seq == i);
    REQUIRE(results[1][i].flags == results[0][i].flags);
    REQUIRE(eit::test::relative_error(results[1][i].image, [&] {
              Eigen::VectorXd v(results[0][i].image.size());
              for (Eigen::Index k = 0; k < v.size(); ++k)
                v[k] = results[0][i].image[static_cast<size_t>(k)];
              return v;
            }()) < 1e-5);
  }
}

TEST_CASE("auto layout: run to completion only for a fast paced source on a synchronous backend") {
  const auto m = random_model(64);
  const auto frames = random_frames(m, 4);
  VectorSource unpaced(frames);
  CollectingSink sink(m.n_out());
  CHECK(Pipeline(m, unpaced, cpu_backend(m), {&sink}).layout() == StageLayout::kPipelined);
  VectorSource inner(frames);
  PacedSource paced(inner, {1000, 1});
  CHECK(Pipeline(m, paced, cpu_backend(m), {&sink}).layout() == StageLayout::kRunToCompletion);
  VectorSource slow_inner(frames);
  PacedSource slow(slow_inner, {50, 1});  // H would go cold between frames on this thread
  CHECK(Pipeline(m, slow, cpu_backend(m), {&sink}).layout() == StageLayout::kPipelined);
}

namespace {
// An asynchronous backend (submit returns before the work is done, as CUDA's) that says whether
// its single frames are fast.
class AsyncBackend final : public eit::test::ForwardingCpuBackend {
 public:
  AsyncBackend(const eit::recon::Model& m, bool fast)
      : ForwardingCpuBackend(m, "async"), fast_(fast) {}
  bool fast_single_frames() const noexcept override { return fast_; }

 private:
  bool fast_;
};
}  // namespace

TEST_CASE(
    "auto layout: an asynchronous backend with fast single frames runs to completion from 500 to "
    "5000 frames/s") {
  const auto m = random_model(64);
  const auto frames = random_frames(m, 4);
  const AsyncBackend fast(m, true), slow(m, false);
  CHECK_FALSE(slow.synchronous());
  const auto layout = [&](const Reconstructor& r, double rate) {
    VectorSource inner(frames);
    if (rate == 0) return resolve_layout(StageLayout::kAuto, r, inner);
    PacedSource paced(inner, {rate, 1});
    return resolve_layout(StageLayout::kAuto, r, paced);
  };
  CHECK(layout(fast, 1000) == StageLayout::kRunToCompletion);
  CHECK(layout(fast, 500) == StageLayout::kRunToCompletion);
  CHECK(layout(fast, 5000) == StageLayout::kRunToCompletion);
  CHECK(layout(fast, 5001) == StageLayout::kPipelined);  // batching keeps up with bursts
  CHECK(layout(fast, 50) == StageLayout::kPipelined);
  CHECK(layout(fast, 0) == StageLayout::kPipelined);
  CHECK(layout(slow, 1000) == StageLayout::kPipelined);
  // The synchronous CPU backend has no upper rate.
  CHECK(layout(*cpu_backend(m), 20000) == StageLayout::kRunToCompletion);
  // What is asked is kept.
  VectorSource any(frames);
  CHECK(resolve_layout(StageLayout::kPipelined, fast, any) == StageLayout::kPipelined);
}

TEST_CASE("a pipeline without sinks recycles every frame") {
  const auto m = random_model(64);
  const auto frames = random_frames(m, 5000);
  VectorSource source(frames);
  PipelineOptions o;
  o.queue_capacity = 8;
  Pipeline p(m, source, cpu_backend(m), {}, o);
  p.start();
  REQUIRE(wait_finished(p));
  CHECK(p.stats().frames_out == frames.size());  // far more than the pool holds
  CHECK(p.pool_size() < frames.size());
}

namespace {

// Slow on its first frame, so that a backlog forms and its thread's next take is a whole burst;
// then stalled on the first frame of that burst until released.
class StallAfterBurstSink final : public ImageSink {
 public:
  std::string_view name() const noexcept override { return "stall-after-burst"; }
  void publish(const FrameSlot&) noexcept override {
    if (calls_.fetch_add(1) == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return;
    }
    while (stalled_.load()) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  SinkStats stats() const noexcept override { return {calls_.load(), 0, 0}; }
  void release() { stalled_.store(false); }

 private:
  std::atomic<uint64_t> calls_{0};
  std::atomic<bool> stalled_{true};
};

}  // namespace

TEST_CASE("a live sink stalled with a burst in hand loses frames at its own queue, not the input") {
  const auto m = random_model(64);
  const auto frames = random_frames(m, 500);
  VectorSource inner(frames);
  PacedSource source(inner, {500, 1});  // 2 ms a frame: the reconstructor keeps up easily
  StallAfterBurstSink sink;
  PipelineOptions o;
  o.policy = Policy::kLive;
  o.queue_capacity = 16;       // little room in the pool besides the sink's share
  o.sink_queue_capacity = 64;  // more than a burst: it refills behind the burst taken
  o.max_batch = 1;
  o.stages = StageLayout::kPipelined;
  Pipeline p(m, source, cpu_backend(m, 1), {&sink}, o);
  p.start();
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (inner.delivered() < frames.size() && std::chrono::steady_clock::now() < limit)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  REQUIRE(inner.delivered() == frames.size());
  // The stalled sink's thread holds a burst and its queue is full again behind it: the pool
  // still had a slot for every frame read, so the only losses are the sink's own.
  const auto stalled = p.stats();
  REQUIRE(stalled.sink_queues.size() == 1);
  CHECK(stalled.sink_queues[0].queue.high_water == o.sink_queue_capacity);
  CHECK(stalled.sink_queues[0].queue.dropped > 0);
  CHECK(stalled.input.dropped == 0);
  sink.release();
  REQUIRE(wait_finished(p));
  const auto st = p.stats();
  CHECK(st.input.dropped == 0);
  CHECK(st.frames_out == frames.size());
  CHECK(st.sink_queues[0].delivered + st.sink_queues[0].queue.dropped == frames.size());
}
