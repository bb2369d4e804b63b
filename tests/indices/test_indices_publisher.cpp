// IndicesPublisher over real ZeroMQ on loopback: a SUB receives the per-frame global message
// (header + region sums) and the per-breath JSON.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <zmq.hpp>

#include "breathing_publisher.hpp"
#include "eit/indices/indices_publisher.hpp"

using namespace eit::indices;

TEST_CASE("IndicesPublisher publishes global sums per frame and a JSON message per breath") {
  eit::test::Breathing b;
  IndicesPublisherOptions po;
  po.endpoint = "tcp://127.0.0.1:*";
  po.stream = "t";
  auto ctx = std::make_shared<zmq::context_t>(1);
  IndicesPublisher pub(eit::test::breathing_engine(b), po, ctx);
  zmq::socket_t sub(*ctx, zmq::socket_type::sub);
  sub.set(zmq::sockopt::subscribe, "eit/t/");
  sub.set(zmq::sockopt::rcvtimeo, 2000);
  sub.connect(pub.endpoint());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // slow joiner

  pub.begin();
  eit::test::BreathingFeed feed(b);
  const size_t n = 800;  // 16 s at 50 frames/s: valleys at 3, 6, 9, 12, 15 s
  size_t globals = 0, breaths = 0;
  double last_global = 0;
  std::string series, breath;
  auto drain = [&] {
    zmq::message_t topic, body;
    while (sub.recv(topic, zmq::recv_flags::dontwait)) {
      REQUIRE(sub.recv(body));
      const std::string t = topic.to_string();
      if (t == "eit/t/global") {
        GlobalHeader h;
        REQUIRE(body.size() == sizeof h + 11 * sizeof(double));
        std::memcpy(&h, body.data(), sizeof h);
        CHECK(std::string(h.magic, 4) == "EIXG");
        CHECK(h.n_values == 11);
        CHECK(h.frame == globals);
        std::memcpy(&last_global, static_cast<const char*>(body.data()) + sizeof h, 8);
        ++globals;
      } else if (t == "eit/t/breath") {
        breath = body.to_string();
        ++breaths;
      } else if (t == "eit/t/indices_series") {
        series = body.to_string();
      }
    }
  };
  for (size_t k = 0; k < n; ++k) {
    feed.publish(pub, k, k);
    if (k % 50 == 0) drain();
  }
  pub.end();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  drain();
  CHECK(globals == n);
  CHECK(breaths >= 3);
  CHECK(pub.breaths() == breaths);
  CHECK(series.find("\"regions\":[\"global\",\"layer_1\"") != std::string::npos);
  CHECK(breath.find("\"type\":\"breath\"") != std::string::npos);
  CHECK(breath.find("\"tidal\":[") != std::string::npos);
  CHECK(last_global >= 0);
  CHECK(pub.stats().dropped == 0);
}

// Issue 10's first finding, for the indices socket: with xpub_nodrop a subscriber that stops
// reading made every send fail once its queue was full, so healthy subscribers got nothing more.
TEST_CASE("a stalled indices subscriber does not hold back a healthy one (PUB drops per peer)") {
  eit::test::Breathing b;
  IndicesPublisherOptions po;
  // ipc: a Unix socket buffers ~200 KB where loopback TCP grows to megabytes.
  po.endpoint = fmt::format("ipc:///tmp/eit-indices-stall-{}", ::getpid());
  po.stream = std::string("t");  // a temporary: GCC 12 warns (-Wrestrict) on this literal
  po.breath_images = false;
  auto ctx = std::make_shared<zmq::context_t>(1);
  IndicesPublisher pub(eit::test::breathing_engine(b), po, ctx);
  zmq::socket_t stalled(*ctx, zmq::socket_type::sub);  // connects, subscribes, never reads
  stalled.set(zmq::sockopt::rcvhwm, 4);
  stalled.set(zmq::sockopt::rcvbuf, 4096);
  stalled.set(zmq::sockopt::subscribe, "eit/t/");
  stalled.connect(pub.endpoint());
  zmq::socket_t healthy(*ctx, zmq::socket_type::sub);
  healthy.set(zmq::sockopt::rcvhwm, 0);  // unbounded: only the publisher can lose its frames
  healthy.set(zmq::sockopt::subscribe, "eit/t/global");
  healthy.set(zmq::sockopt::rcvtimeo, 100);
  healthy.connect(pub.endpoint());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both joined

  std::atomic<bool> done{false};
  std::atomic<size_t> globals{0};
  std::thread reader([&] {
    zmq::message_t topic, body;
    for (;;) {
      if (!healthy.recv(topic)) {  // 100 ms without a message
        if (done.load()) break;
        continue;
      }
      if (healthy.recv(body) && topic.to_string() == "eit/t/global") ++globals;
    }
  });
  pub.begin();
  // ~150 B each: the stalled peer's socket buffers take ~2,000, its queue 1,000 more.
  constexpr size_t kFrames = 14000;
  eit::test::BreathingFeed feed(b);
  for (size_t k = 0; k < kFrames; ++k) {
    feed.publish(pub, k, k % 800);
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  pub.end();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  done = true;
  reader.join();
  MESSAGE("healthy received ", globals.load(), " of ", kFrames, " global messages");
  CHECK(globals.load() >= kFrames * 995 / 1000);
}
