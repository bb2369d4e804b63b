// IndicesPublisher over real ZeroMQ on loopback: a SUB receives the per-frame global message
// (header + region sums) and the per-breath JSON.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "breathing_images.hpp"
#include "eit/indices/indices_publisher.hpp"
#include "eit/pipeline/frame.hpp"

using namespace eit::indices;

TEST_CASE("IndicesPublisher publishes global sums per frame and a JSON message per breath") {
  eit::test::Breathing b;
  IndicesOptions o;
  o.rate_hz = b.rate_hz;
  IndicesPublisherOptions po;
  po.endpoint = "tcp://127.0.0.1:*";
  po.stream = "t";
  auto ctx = std::make_shared<zmq::context_t>(1);
  IndicesPublisher pub(IndicesEngine(BodyLayout::from_grid(b.grid()), o), po, ctx);
  zmq::socket_t sub(*ctx, zmq::socket_type::sub);
  sub.set(zmq::sockopt::subscribe, "eit/t/");
  sub.set(zmq::sockopt::rcvtimeo, 2000);
  sub.connect(pub.endpoint());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // slow joiner

  pub.begin();
  std::vector<float> img;
  eit::pipeline::FrameSlot slot;
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
    b.frame(k, img);
    slot.seq = k;
    slot.image = img.data();
    pub.publish(slot);
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
