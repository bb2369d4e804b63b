// PipelineOptions::cpus: each stage thread pins itself to its CPU (source 0, reconstructor 1,
// sink i at 2 + i) and PipelineStats::thread_cpus says what it got; a CPU the process may not
// use leaves the thread unpinned and is reported, never fatal. Checked from inside the threads
// with pipeline::allowed_cpus (sched_getaffinity); needs a machine where the process may use at
// least 2 CPUs.
#include <doctest/doctest.h>

#include <sched.h>

#include <atomic>
#include <cerrno>
#include <vector>

#include "eit/pipeline/thread_pin.hpp"
#include "pipeline_test_support.hpp"

namespace {

using eit::pipeline::Pipeline;
using eit::pipeline::PipelineOptions;

// Records the CPUs its publishing thread may run on (the sink thread's affinity).
class AffinitySink final : public eit::pipeline::ImageSink {
 public:
  std::string_view name() const noexcept override { return "affinity"; }
  void publish(const eit::pipeline::FrameSlot&) noexcept override {
    if (!seen_.exchange(true)) cpus_ = eit::pipeline::allowed_cpus();
  }
  eit::pipeline::SinkStats stats() const noexcept override { return {}; }
  const std::vector<int>& cpus() const { return cpus_; }  // after the run

 private:
  std::atomic<bool> seen_{false};
  std::vector<int> cpus_;
};

// The source's CPUs seen from its own thread (read() runs on the source stage's thread).
class AffinitySource final : public eit::pipeline::Source {
 public:
  explicit AffinitySource(std::vector<std::vector<float>> frames) : inner_(std::move(frames)) {}
  std::string describe() const override { return "affinity source"; }
  size_t n_values() const noexcept override { return inner_.n_values(); }
  eit::pipeline::ReadStatus read(eit::pipeline::FrameSlot& slot,
                                 std::chrono::milliseconds t) override {
    if (cpus_.empty()) cpus_ = eit::pipeline::allowed_cpus();
    return inner_.read(slot, t);
  }
  void stop() noexcept override { inner_.stop(); }
  eit::pipeline::SourceStats stats() const override { return inner_.stats(); }
  const std::vector<int>& cpus() const { return cpus_; }

 private:
  eit::test::VectorSource inner_;
  std::vector<int> cpus_;
};

}  // namespace

TEST_CASE("stage threads run only on their --cpus CPU and the stats say each was pinned") {
  const std::vector<int> allowed = eit::pipeline::allowed_cpus();
  if (allowed.size() < 2) {
    MESSAGE("SKIPPED: the process may use only ", allowed.size(), " CPU(s)");
    return;
  }
  const auto m = eit::test::random_model(64);
  AffinitySource source(eit::test::random_frames(m, 50));
  AffinitySink sink;
  PipelineOptions o;
  o.stages = eit::pipeline::StageLayout::kPipelined;
  const int source_cpu = allowed[1], sink_cpu = allowed[0];
  o.cpus = {source_cpu, allowed[0], sink_cpu};
  Pipeline p(m, source, eit::test::cpu_backend(m), {&sink}, o);
  p.start();
  REQUIRE(eit::test::wait_finished(p));
  CHECK(source.cpus() == std::vector<int>{source_cpu});
  CHECK(sink.cpus() == std::vector<int>{sink_cpu});
  const auto st = p.stats();
  REQUIRE(st.thread_cpus.size() == 3);
  CHECK(st.thread_cpus[0].thread == "source");
  CHECK(st.thread_cpus[0].cpu == source_cpu);
  CHECK(st.thread_cpus[1].thread == "reconstructor");
  CHECK(st.thread_cpus[2].thread == "sink 0");
  CHECK(st.thread_cpus[2].cpu == sink_cpu);
  for (const auto& t : st.thread_cpus) CHECK(t.error == 0);
  // The thread that built and started the pipeline is left as it was.
  CHECK(eit::pipeline::allowed_cpus() == allowed);
}

TEST_CASE("a CPU the process may not use leaves the stage unpinned and is reported") {
  const std::vector<int> allowed = eit::pipeline::allowed_cpus();
  REQUIRE_FALSE(allowed.empty());
  const int not_allowed = CPU_SETSIZE - 1;  // 1023: not a CPU of any test machine
  REQUIRE(allowed.back() != not_allowed);
  const auto m = eit::test::random_model(64);
  AffinitySource source(eit::test::random_frames(m, 20));
  AffinitySink sink;
  PipelineOptions o;
  o.stages = eit::pipeline::StageLayout::kRunToCompletion;  // one stage thread: the source
  o.cpus = {not_allowed};
  Pipeline p(m, source, eit::test::cpu_backend(m), {&sink}, o);
  p.start();
  REQUIRE(eit::test::wait_finished(p));
  CHECK(source.cpus() == allowed);  // still free to run anywhere it could
  const auto st = p.stats();
  REQUIRE(st.thread_cpus.size() == 2);  // the source and the sink thread; no reconstructor
  CHECK(st.thread_cpus[0].thread == "source");
  CHECK(st.thread_cpus[1].thread == "sink 0");
  for (const auto& t : st.thread_cpus) {
    CHECK(t.cpu == not_allowed);
    CHECK(t.error == EINVAL);
  }
  CHECK(Pipeline(m, source, eit::test::cpu_backend(m), {&sink}, {}).stats().thread_cpus.empty());
}

TEST_CASE(
    "a stage thread yields while it polls only on a CPU it shares with another stage thread") {
  using eit::pipeline::PollStyle;
  using eit::pipeline::stage_poll_style;
  const std::vector<size_t> pipelined = {0, 1, 2};  // source, reconstructor, one sink thread
  // Unpinned: the kernel spreads the threads; pausing (yielding there showed no gain).
  CHECK(stage_poll_style({}, 1, pipelined) == PollStyle::kPause);
  // A CPU each (--cpus auto on a big host).
  for (size_t t : pipelined) CHECK(stage_poll_style({1, 2, 3}, t, pipelined) == PollStyle::kPause);
  // One CPU for all (--cpus 1 on a 2-core VM).
  for (size_t t : pipelined) CHECK(stage_poll_style({1}, t, pipelined) == PollStyle::kYield);
  // Round robin over two: the source and the sink thread share CPU 1, the reconstructor has 2.
  CHECK(stage_poll_style({1, 2}, 0, pipelined) == PollStyle::kYield);
  CHECK(stage_poll_style({1, 2}, 1, pipelined) == PollStyle::kPause);
  CHECK(stage_poll_style({1, 2}, 2, pipelined) == PollStyle::kYield);
  // Run to completion has no reconstructor thread: with 3 CPUs the source's CPU is its own.
  const std::vector<size_t> inline_layout = {0, 2};
  CHECK(stage_poll_style({1, 2, 3}, 0, inline_layout) == PollStyle::kPause);
  CHECK(stage_poll_style({1, 2, 3, 1}, 0, {0, 2, 3}) == PollStyle::kYield);  // sink 1 → CPU 1
}
