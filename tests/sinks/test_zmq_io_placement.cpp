// ZeroMQ's I/O threads on a chosen CPU (eit/sinks/zmq_io_placement.hpp,
// ZmqPublisherOptions::io_cpu): the kernel's view of the thread is checked, so a placement that is
// not applied, or applied to another context's thread, fails. (The bench's report of it:
// tests/tools/test_bench_cpu_pinning.)
#include <doctest/doctest.h>
#include <sched.h>

#include <vector>

#include <zmq.hpp>

#include "../pipeline/pipeline_test_support.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/thread_pin.hpp"
#include "eit/sinks/zmq_io_placement.hpp"
#include "eit/sinks/zmq_publisher.hpp"
#include "publisher_options.hpp"

using namespace eit;

namespace {

// The last CPU this process may use; -1 when it may use only one (placement then shows nothing).
int a_cpu_of_several() {
  const std::vector<int> cpus = pipeline::allowed_cpus();
  return cpus.size() >= 2 ? cpus.back() : -1;
}

}  // namespace

TEST_CASE("ZmqPublisher with io_cpu runs its context's I/O thread on that CPU alone") {
  const int cpu = a_cpu_of_several();
  if (cpu < 0) {
    MESSAGE("skipped: the process may use only one CPU, so a placement cannot be told apart");
    return;
  }
  const recon::Model model = test::random_model(16);
  auto placed_options = test::loopback_publisher_options(sinks::ZmqPattern::kPub, false);
  placed_options.io_cpu = cpu;
  sinks::ZmqPublisher placed(model, placed_options);
  REQUIRE(placed.io_tag() >= 0);
  CHECK(sinks::io_thread_cpus(0, placed.io_tag(), cpu) == std::vector<int>{cpu});

  // Without io_cpu nothing is placed or named; the placed context's thread is still the only
  // one carrying its tag.
  sinks::ZmqPublisher unplaced(model,
                               test::loopback_publisher_options(sinks::ZmqPattern::kPub, false));
  CHECK(unplaced.io_tag() == -1);
  CHECK(sinks::io_thread_cpus(0, placed.io_tag(), cpu) == std::vector<int>{cpu});
}

TEST_CASE(
    "io_wake kDefer starts the placed I/O threads at SCHED_BATCH, kPreempt leaves them as is") {
  const int cpu = pipeline::allowed_cpus().front();
  const recon::Model model = test::random_model(16);
  auto deferring_options = test::loopback_publisher_options(sinks::ZmqPattern::kPub, false);
  deferring_options.io_cpu = cpu;
  deferring_options.io_wake = sinks::IoWake::kDefer;
  sinks::ZmqPublisher deferring(model, deferring_options);
  REQUIRE(deferring.io_tag() >= 0);
  CHECK(deferring.io_defers());
  CHECK(sinks::io_thread_policy(0, deferring.io_tag(), SCHED_BATCH) == SCHED_BATCH);

  auto preempting_options = deferring_options;
  preempting_options.io_wake = sinks::IoWake::kPreempt;
  sinks::ZmqPublisher preempting(model, preempting_options);
  REQUIRE(preempting.io_tag() >= 0);
  CHECK_FALSE(preempting.io_defers());
  CHECK(sinks::io_thread_policy(0, preempting.io_tag(), SCHED_OTHER) == SCHED_OTHER);
  // Each context keeps its own policy: the deferring one is unchanged by the second.
  CHECK(sinks::io_thread_policy(0, deferring.io_tag()) == SCHED_BATCH);
  // A tag no thread carries is not found.
  CHECK(sinks::io_thread_policy(0, 9'999, -1, 0) == -1);
}

TEST_CASE(
    "a deferring publisher reports each message it hands its I/O threads once and a "
    "preempting one never") {
  const int cpu = pipeline::allowed_cpus().front();
  const recon::Model model = test::random_model(16);
  std::vector<float> image(model.n_out(), 0.25f);
  pipeline::FrameSlot frame;
  frame.image = image.data();
  frame.stamp(pipeline::Stage::kReceived, pipeline::now_ns());
  frame.stamp(pipeline::Stage::kPublished, pipeline::now_ns());

  auto options = test::loopback_publisher_options(sinks::ZmqPattern::kPub, false);
  options.io_cpu = cpu;
  options.io_wake = sinks::IoWake::kDefer;
  sinks::ZmqPublisher deferring(model, options);
  CHECK_FALSE(deferring.take_handoff());  // nothing sent yet
  deferring.begin();                      // the series message
  CHECK(deferring.take_handoff());
  CHECK_FALSE(deferring.take_handoff());  // once per hand-over
  for (uint64_t seq = 1; seq <= 3; ++seq) {
    frame.seq = seq;
    deferring.publish(frame);  // publish batch 1: each image leaves in publish()
    CHECK(deferring.take_handoff());
    CHECK_FALSE(deferring.take_handoff());
  }
  CHECK(deferring.stats().sent == 3);

  options.io_wake = sinks::IoWake::kPreempt;  // the I/O thread has already run when send returns
  sinks::ZmqPublisher preempting(model, options);
  preempting.begin();
  preempting.publish(frame);
  CHECK_FALSE(preempting.take_handoff());
  CHECK(preempting.stats().sent == 1);
}
