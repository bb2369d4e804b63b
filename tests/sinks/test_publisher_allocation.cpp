// What the ZeroMQ publisher allocates per image on the publishing thread, counted
// (allocation_count.hpp; counting_new.hpp is included by test_shm_ring.cpp of this binary).
//
// The publisher's own code allocates nothing per image: the image goes into a preallocated pool
// slot that is lent to libzmq. libzmq itself allocates one 40-byte reference-count block per
// message it is lent with a free callback (zmq_msg_init_data; libzmq 4.3 has no public call that
// avoids it), so the publishing thread makes at most one allocation per *message*: one per image,
// or one per batch of --publish-batch images. Now and then libzmq also allocates a queue chunk
// (256 message parts) when its I/O thread lags, which the bound below leaves room for.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "../pipeline/pipeline_test_support.hpp"
#include "allocation_count.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/sinks/zmq_publisher.hpp"
#include "publisher_options.hpp"

using namespace eit::pipeline;
using namespace eit::sinks;

namespace {

struct Counted {
  uint64_t allocations = 0;  // on the publishing thread, over the measured images
  uint64_t messages = 0;     // image messages the publisher lent to libzmq over them
  uint64_t copied = 0;       // images sent by copy (pool exhausted): must stay 0 here
};

// Publishes warmup + measured images over PUSH to a consumer thread; counts the measured ones.
Counted count_publish_allocations(size_t publish_batch, int warmup, int measured) {
  const auto m = eit::test::random_model();
  auto ctx = std::make_shared<zmq::context_t>(1);
  auto options = eit::test::loopback_publisher_options(ZmqPattern::kPush, true);
  options.publish_batch = publish_batch;
  ZmqPublisher pub(m, options, ctx);
  REQUIRE(pub.publish_batch() == publish_batch);
  zmq::socket_t pull(*ctx, zmq::socket_type::pull);
  pull.set(zmq::sockopt::rcvtimeo, 10000);
  pull.connect(pub.endpoint());
  const int expected_messages = 1 + (warmup + measured) / static_cast<int>(publish_batch);
  std::atomic<int> received{0};
  std::thread consumer([&] {
    std::vector<zmq::message_t> parts;
    while (received.load() < expected_messages) {
      parts.clear();
      if (!zmq::recv_multipart(pull, std::back_inserter(parts))) break;
      received.fetch_add(1);
    }
  });
  std::vector<float> values(m.n_meas(), 0.0f), image(m.n_out(), 1.0f);
  FrameSlot f;
  f.values = values.data();
  f.image = image.data();
  pub.begin();  // the series message (copied by libzmq: before the count starts)
  auto publish_n = [&](int n) {
    for (int i = 0; i < n; ++i) {
      f.seq++;
      f.stamp(Stage::kPublished, now_ns());
      pub.publish(f);
      pub.tick(now_ns());
      // Paced, as frames are: libzmq's I/O thread keeps up and reuses its queue chunks.
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  };
  publish_n(warmup);
  const uint64_t sent_before = pub.stats().sent, allocations_before = eit::test::t_allocations;
  const uint64_t copied_before = pub.health().copied_sends;
  publish_n(measured);
  Counted c;
  c.allocations = eit::test::t_allocations - allocations_before;
  c.messages = (pub.stats().sent - sent_before) / publish_batch;
  c.copied = pub.health().copied_sends - copied_before;
  consumer.join();
  CHECK(received.load() == expected_messages);
  return c;
}

}  // namespace

TEST_CASE(
    "zmq publisher: at most one allocation per message (libzmq's), none of its own per image") {
#if !defined(EIT_COUNT_MALLOC)
  MESSAGE("skipped: malloc cannot be counted in this build (sanitizer or non-glibc)");
#else
  for (const size_t batch : {size_t{1}, size_t{8}}) {
    CAPTURE(batch);
    constexpr int kWarmup = 400, kMeasured = 2000;
    const Counted c = count_publish_allocations(batch, kWarmup, kMeasured);
    MESSAGE("publish batch ", batch, ": ", c.allocations,
            " allocations on the publishing thread for ", kMeasured, " images in ", c.messages,
            " messages");
    CHECK(c.messages == kMeasured / batch);
    CHECK(c.copied == 0);
    // One per message, plus at most one queue chunk per 256 parts (3 parts per message).
    CHECK(c.allocations <= c.messages + c.messages / 64 + 1);
  }
#endif
}
