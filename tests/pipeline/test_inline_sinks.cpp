// Inline sinks (ImageSink::inline_safe()): the fan-out publishes them on the thread that finished
// the frame, every frame in order, with begin/tick/end on that thread too; sinks that are not
// inline-safe still get their own lane thread, and a stalled one never slows the inline sink.
#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/paced_source.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "pipeline_test_support.hpp"

using namespace eit::pipeline;
using eit::test::CollectingSink;
using eit::test::random_frames;
using eit::test::random_model;
using eit::test::VectorSource;
using eit::test::wait_finished;

namespace {

// The CPU backend, noting the thread that collects finished frames: the thread that fans out.
class ThreadNotingBackend final : public eit::test::ForwardingCpuBackend {
 public:
  explicit ThreadNotingBackend(const eit::recon::Model& m) : ForwardingCpuBackend(m, "cpu") {}
  bool synchronous() const noexcept override { return true; }
  size_t complete(std::span<FrameSlot*> out, bool wait) override {
    const std::lock_guard lock(mutex_);
    threads_.push_back(std::this_thread::get_id());
    return ForwardingCpuBackend::complete(out, wait);
  }
  std::vector<std::thread::id> threads() const {
    const std::lock_guard lock(mutex_);
    return threads_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::thread::id> threads_;
};

// An inline-safe sink recording, in call order, which call came on which thread (tests only: it
// locks and allocates, which a real inline sink must not).
class CallLogSink final : public ImageSink {
 public:
  struct Call {
    char what;  // 'b'egin, 'p'ublish, 't'ick, 'e'nd
    uint64_t seq;
    uint32_t dropped_before;
    std::thread::id thread;
  };
  std::string_view name() const noexcept override { return "inline log"; }
  bool inline_safe() const noexcept override { return true; }
  void begin() noexcept override { log('b', 0, 0); }
  void publish(const FrameSlot& f) noexcept override { log('p', f.seq, f.dropped_before); }
  void tick(int64_t) noexcept override { log('t', 0, 0); }
  void end() noexcept override { log('e', 0, 0); }
  SinkStats stats() const noexcept override { return {published(), 0, 0}; }
  uint64_t published() const noexcept {
    const std::lock_guard lock(mutex_);
    uint64_t n = 0;
    for (const Call& c : calls_) n += c.what == 'p';
    return n;
  }
  std::vector<Call> calls() const {
    const std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  void log(char what, uint64_t seq, uint32_t dropped) noexcept {
    const std::lock_guard lock(mutex_);
    calls_.push_back({what, seq, dropped, std::this_thread::get_id()});
  }
  mutable std::mutex mutex_;
  std::vector<Call> calls_;
};

}  // namespace

TEST_CASE("an inline-safe sink gets every frame on the producing thread, lane sinks keep theirs") {
  for (StageLayout layout : {StageLayout::kPipelined, StageLayout::kRunToCompletion}) {
    CAPTURE(layout_name(layout));
    const auto m = random_model(256);
    const auto frames = random_frames(m, 1500);
    VectorSource inner(frames);
    PacedSource source(inner, {3000, 1});  // 0.5 s: several 100 ms ticks
    CollectingSink stalled(m.n_out()), lively(m.n_out());
    CallLogSink in_line;
    stalled.stall();
    PipelineOptions o;
    o.policy = Policy::kLive;
    o.queue_capacity = 4096;  // room for the whole stream: the source never drops
    o.sink_queue_capacity = 8;
    o.stages = layout;
    auto backend = std::make_unique<ThreadNotingBackend>(m);
    const ThreadNotingBackend& noted = *backend;
    Pipeline p(m, source, std::move(backend), {&stalled, &in_line, &lively}, o);
    p.start();
    // The inline sink gets the whole stream while the stalled lane sink has not returned from
    // its first call.
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (in_line.published() < frames.size() && std::chrono::steady_clock::now() < limit)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    CHECK(in_line.published() == frames.size());
    CHECK(stalled.count() == 0);
    stalled.release();
    REQUIRE(wait_finished(p));

    // One producing thread, the one that collected the frames from the backend.
    const auto producers = noted.threads();
    REQUIRE_FALSE(producers.empty());
    const std::thread::id producer = producers.front();
    for (const auto& t : producers) REQUIRE(t == producer);

    // begin, then every frame in order (none missed), ticks in between, then end: all there.
    const auto calls = in_line.calls();
    REQUIRE(calls.size() >= frames.size() + 2);
    CHECK(calls.front().what == 'b');
    CHECK(calls.back().what == 'e');
    uint64_t next_seq = 0, ticks = 0;
    for (size_t i = 0; i < calls.size(); ++i) {
      const auto& c = calls[i];
      REQUIRE(c.thread == producer);
      if (i > 0 && i + 1 < calls.size()) REQUIRE((c.what == 'p' || c.what == 't'));
      if (c.what == 't') ++ticks;
      if (c.what != 'p') continue;
      REQUIRE(c.seq == next_seq);
      REQUIRE(c.dropped_before == 0);
      ++next_seq;
    }
    CHECK(next_seq == frames.size());
    CHECK(ticks >= 2);

    // The other two still run on lane threads of their own.
    CHECK(lively.publisher_thread() != producer);
    CHECK(stalled.publisher_thread() != producer);
    CHECK(stalled.publisher_thread() != lively.publisher_thread());

    const auto st = p.stats();
    REQUIRE(st.sink_queues.size() == 3);
    CHECK_FALSE(st.sink_queues[0].runs_inline);
    CHECK(st.sink_queues[1].runs_inline);
    CHECK_FALSE(st.sink_queues[2].runs_inline);
    CHECK(st.sink_queues[1].delivered == frames.size());
    CHECK(st.sink_queues[1].queue.dropped == 0);
    CHECK(st.sink_queues[0].queue.dropped > 0);  // the stalled lane dropped its own
    CHECK(st.sink_queues[1].latency.count == frames.size());
    CHECK(stalled.count() + st.sink_queues[0].queue.dropped == st.frames_out);
    CHECK(lively.count() + st.sink_queues[2].queue.dropped == st.frames_out);
  }
}

TEST_CASE("in a lossless pipeline an inline sink never blocks and gets every frame") {
  const auto m = random_model(256);
  const auto frames = random_frames(m, 400);
  VectorSource source(frames);  // unpaced
  CallLogSink in_line;
  CollectingSink recorder(m.n_out(), SinkPolicy::kBlock);
  PipelineOptions o;
  o.policy = Policy::kLossless;
  o.queue_capacity = 16;
  o.sink_queue_capacity = 4;
  Pipeline p(m, source, std::make_unique<ThreadNotingBackend>(m), {&in_line, &recorder}, o);
  p.start();
  REQUIRE(wait_finished(p));
  const auto st = p.stats();
  CHECK_FALSE(st.sink_queues[0].blocks);  // it cannot wait, so its lane never does either
  CHECK(st.sink_queues[1].blocks);
  CHECK(in_line.published() == frames.size());
  CHECK(recorder.count() == frames.size());
}
