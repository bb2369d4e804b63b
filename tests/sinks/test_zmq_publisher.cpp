#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "../pipeline/pipeline_test_support.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/paced_source.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/sinks/zmq_publisher.hpp"
#include "publisher_options.hpp"

using namespace eit::pipeline;
using namespace eit::sinks;
using eit::test::expected_image;
using eit::test::loopback_publisher_options;
using eit::test::random_frames;
using eit::test::random_model;
using eit::test::VectorSource;
using eit::test::wait_finished;

namespace {

struct Message {
  std::string topic;
  std::optional<ImageHeader> header;
  std::vector<float> image;
  std::string json;
};

// One multipart message, or nullopt after the socket's receive timeout.
std::optional<Message> receive(zmq::socket_t& s) {
  std::vector<zmq::message_t> parts;
  if (!zmq::recv_multipart(s, std::back_inserter(parts))) return std::nullopt;
  Message m;
  m.topic = parts.at(0).to_string();
  if (m.topic.ends_with("/img")) {
    REQUIRE(parts.size() == 3);
    m.header =
        decode_image_header({static_cast<const std::byte*>(parts[1].data()), parts[1].size()});
    m.image.resize(parts[2].size() / sizeof(float));
    std::memcpy(m.image.data(), parts[2].data(), parts[2].size());
  } else {
    REQUIRE(parts.size() == 2);
    m.json = parts[1].to_string();
  }
  return m;
}

}  // namespace

TEST_CASE(
    "a lossless run of N frames delivers exactly N images in order over PUSH, each H·(v − v_ref)") {
  const auto m = random_model();
  const auto frames = random_frames(m, 500);
  auto ctx = std::make_shared<zmq::context_t>(1);
  ZmqPublisher pub(m, loopback_publisher_options(ZmqPattern::kPush, true), ctx);
  REQUIRE(pub.endpoint().starts_with("tcp://127.0.0.1:"));
  zmq::socket_t pull(*ctx, zmq::socket_type::pull);
  pull.set(zmq::sockopt::rcvtimeo, 10000);
  pull.connect(pub.endpoint());

  VectorSource source(frames);
  Pipeline p(m, source, std::make_unique<CpuReconstructor>(m), {&pub});
  p.start();

  auto first = receive(pull);
  REQUIRE(first);
  CHECK(first->topic == "eit/test/series");
  const auto series = nlohmann::json::parse(first->json);
  CHECK(series["type"] == "series");
  CHECK(series["model_id"] == m.id);
  CHECK(series["image"]["shape"] == nlohmann::json::array({32, 32}));
  CHECK(series["protocol"]["n_meas"] == 208);
  CHECK(series["geometry"]["kind"] == "grid");

  size_t images = 0;
  double worst = 0;
  bool ended = false;
  while (!ended) {
    auto msg = receive(pull);
    REQUIRE(msg);
    if (msg->topic == "eit/test/series") {
      const auto j = nlohmann::json::parse(msg->json);
      if (j["type"] == "series-end") {
        CHECK(j["frames_sent"] == frames.size());
        ended = true;
      }
      continue;
    }
    REQUIRE(msg->topic == "eit/test/img");
    REQUIRE(msg->header);
    const ImageHeader& h = *msg->header;
    REQUIRE(h.seq == images);
    CHECK(h.ndim == 2);
    CHECK(h.shape[0] == 32);
    CHECK(h.shape[1] == 32);
    CHECK(h.count == 1024);
    CHECK(h.series_id == pub.series_id());
    CHECK(std::string(h.model_id) == m.id);
    CHECK(h.t_acquired_ns > 0);
    CHECK(h.t_published_ns >= h.t_acquired_ns);
    REQUIRE(msg->image.size() == 1024);
    worst = std::max(worst, eit::test::relative_error(
                                msg->image, expected_image(m, frames[images], m.v_ref, false)));
    ++images;
  }
  REQUIRE(wait_finished(p));
  CHECK(images == frames.size());
  CHECK(worst < 2e-5);
  CHECK(pub.stats().sent == frames.size());
  CHECK(pub.stats().dropped == 0);
}

TEST_CASE("lossless PUSH loses nothing behind a slow consumer") {
  const auto m = random_model(256);
  const auto frames = random_frames(m, 300);
  auto ctx = std::make_shared<zmq::context_t>(1);
  auto o = loopback_publisher_options(ZmqPattern::kPush, true);
  o.send_hwm = 2;
  ZmqPublisher pub(m, o, ctx);
  zmq::socket_t pull(*ctx, zmq::socket_type::pull);
  pull.set(zmq::sockopt::rcvhwm, 2);
  pull.set(zmq::sockopt::rcvtimeo, 10000);
  pull.connect(pub.endpoint());
  VectorSource source(frames);
  PipelineOptions po;
  po.queue_capacity = 4;
  Pipeline p(m, source, std::make_unique<CpuReconstructor>(m), {&pub}, po);
  p.start();
  uint64_t next = 0;
  while (next < frames.size()) {
    auto msg = receive(pull);
    REQUIRE(msg);
    if (!msg->header) continue;
    REQUIRE(msg->header->seq == next);
    REQUIRE(msg->header->dropped_before == 0);
    ++next;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  REQUIRE(wait_finished(p));
  CHECK(p.stats().dropped() == 0);
  CHECK(pub.stats().dropped == 0);
  CHECK(pub.stats().sent == frames.size());
}

TEST_CASE("live PUB never blocks the source behind a stalled subscriber and shows the stall") {
  const auto m = random_model();
  const auto frames = random_frames(m, 5000);
  auto ctx = std::make_shared<zmq::context_t>(1);
  auto o = loopback_publisher_options(ZmqPattern::kPub, false);
  o.send_hwm = 4;
  ZmqPublisher pub(m, o, ctx);
  zmq::socket_t sub(*ctx, zmq::socket_type::sub);
  sub.set(zmq::sockopt::rcvhwm, 4);
  sub.set(zmq::sockopt::rcvbuf, 4096);
  sub.set(zmq::sockopt::subscribe, "eit/test/");
  sub.connect(pub.endpoint());
  // Let the subscription reach the publisher (bounded; not a timing assertion).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  VectorSource frames_source(frames);
  // Paced (0.5 s in all) so the publisher's peer checks, every 10 ms, see the stall develop: an
  // unpaced run can end before the first check.
  PacedSource source(frames_source, PacingOptions{10000.0});
  PipelineOptions po;
  po.policy = Policy::kLive;
  Pipeline p(m, source, std::make_unique<CpuReconstructor>(m), {&pub}, po);
  p.start();
  REQUIRE(wait_finished(p));  // the subscriber never reads, yet the run completes
  const auto st = p.stats();
  CHECK(st.frames_in == frames.size());
  CHECK(frames_source.delivered() == frames.size());
  // PUB drops per subscriber inside libzmq; the publisher shows frames that went past a
  // subscriber whose queue was full and not moving.
  CHECK(pub.health().frames_while_stalled > 0);
  // Every frame is accounted once: sent, dropped by the publisher, or (live policy, a sink
  // lane that fell behind on a loaded host) dropped from the sink's own queue before it.
  CHECK(pub.stats().sent + pub.stats().dropped + st.sink_queues.at(0).queue.dropped ==
        st.frames_out);
  CHECK(st.sinks.at(0).dropped == pub.stats().dropped);
}

TEST_CASE("binding an endpoint already in use fails with a message naming it") {
  const auto m = random_model(64);
  auto ctx = std::make_shared<zmq::context_t>(1);
  ZmqPublisher first(m, loopback_publisher_options(ZmqPattern::kPub, false), ctx);
  auto o = loopback_publisher_options(ZmqPattern::kPub, false);
  o.endpoint = first.endpoint();
  CHECK_THROWS_WITH_AS(
      ZmqPublisher(m, o, ctx),
      doctest::Contains(fmt::format("cannot bind PUB socket to '{}'", o.endpoint).c_str()),
      std::runtime_error);
  o.endpoint = "tcp://not-an-address:99999";
  CHECK_THROWS_AS(ZmqPublisher(m, o, ctx), std::runtime_error);
}

TEST_CASE("image header decoding rejects bytes that are not a version-1 image header") {
  ImageHeader h;
  h.shape[0] = 8;
  h.count = 8;
  std::vector<std::byte> bytes(sizeof h);
  std::memcpy(bytes.data(), &h, sizeof h);
  CHECK(decode_image_header(bytes));
  CHECK_FALSE(decode_image_header(std::span(bytes).first(50)));
  bytes[0] = std::byte{0};
  CHECK_FALSE(decode_image_header(bytes));
}
