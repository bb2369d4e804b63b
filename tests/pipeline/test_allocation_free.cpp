// The per-frame path allocates nothing: every malloc-family call in this binary is counted
// (counting_new.hpp interposes glibc's malloc, which operator new also goes through), and N frames
// through the whole pipeline — source, reconstructor (CPU), fan-out, a sink thread and an inline
// sink (published by the fan-out itself) — after a warm-up add no allocation, in both stage
// layouts.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/paced_source.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "pipeline_test_support.hpp"

#include "counting_new.hpp"

using namespace eit::pipeline;

namespace {

// A source that hands out `warmup` frames, then waits (without allocating) until opened, then
// hands out the rest.
class GatedSource final : public Source {
 public:
  GatedSource(std::vector<std::vector<float>> frames, size_t warmup)
      : frames_(std::move(frames)), warmup_(warmup) {}
  std::string describe() const override { return "gated test source"; }
  size_t n_values() const noexcept override { return frames_[0].size(); }
  ReadStatus read(FrameSlot& slot, std::chrono::milliseconds) override {
    if (stopped_.load()) return ReadStatus::kStopped;
    if (next_ >= frames_.size()) return ReadStatus::kEnd;
    while (next_ == warmup_ && !open_.load()) {
      if (stopped_.load()) return ReadStatus::kStopped;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    std::copy(frames_[next_].begin(), frames_[next_].end(), slot.values);
    slot.seq = next_++;
    return ReadStatus::kFrame;
  }
  void stop() noexcept override { stopped_.store(true); }
  SourceStats stats() const override { return {}; }
  void open() { open_.store(true); }

 private:
  std::vector<std::vector<float>> frames_;
  size_t warmup_, next_ = 0;
  std::atomic<bool> stopped_{false}, open_{false};
};

// Sums a few image values per frame; counts frames. Allocates nothing.
class SummingSink final : public ImageSink {
 public:
  explicit SummingSink(bool runs_inline = false) : inline_(runs_inline) {}
  std::string_view name() const noexcept override { return "sum"; }
  bool inline_safe() const noexcept override { return inline_; }
  void publish(const FrameSlot& f) noexcept override {
    sum_ += f.image[0] + f.image[7];
    count_.fetch_add(1, std::memory_order_release);
  }
  void tick(int64_t) noexcept override { ++ticks_; }
  SinkStats stats() const noexcept override { return {count_.load(), 0, 0}; }
  uint64_t count() const noexcept { return count_.load(std::memory_order_acquire); }

 private:
  bool inline_;
  double sum_ = 0;
  uint64_t ticks_ = 0;
  std::atomic<uint64_t> count_{0};
};

}  // namespace

TEST_CASE("no allocation per frame: source, CPU reconstructor, fan-out, sink thread, inline sink") {
#if !defined(EIT_COUNT_MALLOC)
  MESSAGE("skipped: malloc cannot be counted in this build (sanitizer or non-glibc)");
#else
  constexpr size_t kWarmup = 200, kMeasured = 3000;
  const auto m = eit::test::random_model(1024);
  const auto frames = eit::test::random_frames(m, kWarmup + kMeasured);
  struct Case {
    StageLayout layout;
    LatencyMode mode;
    bool paced;
  };
  for (const Case c : {Case{StageLayout::kPipelined, LatencyMode::kBalanced, false},
                       Case{StageLayout::kRunToCompletion, LatencyMode::kIdle, true},
                       Case{StageLayout::kPipelined, LatencyMode::kIdle, true}}) {
    CAPTURE(layout_name(c.layout));
    CAPTURE(latency_mode_name(c.mode));
    GatedSource gated(frames, kWarmup);
    PacedSource paced(gated, {c.paced ? 20000.0 : 0.0, 1});
    SummingSink a, b(true);
    PipelineOptions o;
    o.stages = c.layout;
    o.latency_mode = c.mode;
    o.queue_capacity = 64;
    Pipeline p(m, paced, std::make_unique<CpuReconstructor>(m, CpuOptions{16}), {&a, &b}, o);
    p.start();
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((a.count() < kWarmup || b.count() < kWarmup) && std::chrono::steady_clock::now() < limit)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(a.count() == kWarmup);
    const uint64_t before = eit::test::g_allocations.load();
    gated.open();
    while ((a.count() < kWarmup + kMeasured || b.count() < kWarmup + kMeasured) &&
           std::chrono::steady_clock::now() < limit)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const uint64_t after = eit::test::g_allocations.load();
    CHECK(a.count() == kWarmup + kMeasured);
    CHECK(b.count() == kWarmup + kMeasured);
    CHECK(after - before == 0);
    CHECK(p.stats().sink_queues.at(1).runs_inline);
    p.request_stop();
    p.wait();
  }
  // The hook sees allocations at all (so a zero above means something).
  const uint64_t before = eit::test::g_allocations.load();
  auto* v = new std::vector<int>(100);
  delete v;
  CHECK(eit::test::g_allocations.load() - before >= 2);
#endif
}
