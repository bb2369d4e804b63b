// ZmqPublisher's publish batch (image_batch.hpp, docs/protocol.md "Image batch message"): images
// that wait for the publisher leave as one "imgs" message; a lone one still goes as "img"; the
// pipeline flushes a sink whenever its queue runs empty, so no image waits for the next one.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "../pipeline/pipeline_test_support.hpp"
#include "eit/pipeline/paced_source.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/sinks/image_batch.hpp"
#include "eit/sinks/zmq_publisher.hpp"
#include "publisher_options.hpp"

using namespace eit::pipeline;
using namespace eit::sinks;
using eit::test::loopback_publisher_options;
using eit::test::random_frames;
using eit::test::random_model;
using eit::test::VectorSource;
using eit::test::wait_finished;

namespace {

std::span<const std::byte> bytes_of(const zmq::message_t& m) {
  return {static_cast<const std::byte*>(m.data()), m.size()};
}

struct Received {
  std::string topic;
  std::vector<ImageHeader> headers;
  std::vector<std::vector<float>> images;
  std::string json;
};

// One multipart message of the publisher, its images decoded (one for "img", n for "imgs").
std::optional<Received> receive(zmq::socket_t& s) {
  std::vector<zmq::message_t> parts;
  if (!zmq::recv_multipart(s, std::back_inserter(parts))) return std::nullopt;
  Received r;
  r.topic = parts.at(0).to_string();
  const auto keep = [&](const ImageHeader& h, std::span<const std::byte> payload) {
    r.headers.push_back(h);
    r.images.emplace_back(payload.size() / sizeof(float));
    std::memcpy(r.images.back().data(), payload.data(), payload.size());
  };
  if (r.topic.ends_with(kImageBatchTopicSuffix)) {
    REQUIRE(parts.size() == 3);
    REQUIRE(for_each_batched_image(bytes_of(parts[1]), bytes_of(parts[2]), keep) > 0);
  } else if (r.topic.ends_with(kImageTopicSuffix)) {
    REQUIRE(parts.size() == 3);
    const auto h = decode_image_header(bytes_of(parts[1]));
    REQUIRE(h);
    REQUIRE(parts[2].size() == h->count * sizeof(float));
    keep(*h, bytes_of(parts[2]));
  } else {
    REQUIRE(parts.size() == 2);
    r.json = parts[1].to_string();
  }
  return r;
}

// A frame the publisher can read: seq, stamps and an image of n_out values k + seq.
struct TestFrame {
  FrameSlot slot;
  std::vector<float> image;
  TestFrame(uint64_t seq, size_t n_out) : image(n_out) {
    for (size_t k = 0; k < n_out; ++k) image[k] = static_cast<float>(k) + static_cast<float>(seq);
    slot.seq = seq;
    slot.image = image.data();
    slot.stamp(Stage::kReceived, 1000 + static_cast<int64_t>(seq));
    slot.stamp(Stage::kPublished, 2000 + static_cast<int64_t>(seq));
  }
};

// A lossless PUSH publisher with this publish batch and a PULL socket connected to it.
struct PushRig {
  std::shared_ptr<zmq::context_t> ctx = std::make_shared<zmq::context_t>(1);
  ZmqPublisher pub;
  zmq::socket_t pull;
  PushRig(const eit::recon::Model& m, size_t publish_batch)
      : pub(m, options(publish_batch), ctx), pull(*ctx, zmq::socket_type::pull) {
    pull.set(zmq::sockopt::rcvtimeo, 10000);
    pull.connect(pub.endpoint());
  }
  static ZmqPublisherOptions options(size_t publish_batch) {
    auto o = loopback_publisher_options(ZmqPattern::kPush, true);
    o.publish_batch = publish_batch;
    return o;
  }
  // Every image message until the series-end (series messages skipped).
  std::vector<Received> images_until_end() {
    std::vector<Received> got;
    while (true) {
      auto msg = receive(pull);
      REQUIRE(msg);
      if (msg->json.empty())
        got.push_back(std::move(*msg));
      else if (nlohmann::json::parse(msg->json)["type"] == "series-end")
        return got;
    }
  }
};

// A lossless pipeline of the CPU backend from `source` into the rig's publisher.
std::unique_ptr<Pipeline> start_lossless(const eit::recon::Model& m, Source& source, PushRig& rig) {
  PipelineOptions po;
  po.policy = Policy::kLossless;
  auto p = std::make_unique<Pipeline>(m, source, eit::test::cpu_backend(m),
                                      std::vector<ImageSink*>{&rig.pub}, po);
  p->start();
  return p;
}

}  // namespace

TEST_CASE(
    "a publish batch of 4 sends full batches at once, the rest on flush, a lone image as img") {
  const auto m = random_model(64);
  PushRig rig(m, 4);
  ZmqPublisher& pub = rig.pub;
  zmq::socket_t& pull = rig.pull;
  CHECK(pub.publish_batch() == 4);

  pub.begin();
  auto series = receive(pull);
  REQUIRE(series);
  CHECK(series->topic == "eit/test/series");
  CHECK(nlohmann::json::parse(series->json)["publish_batch"] == 4);

  std::vector<TestFrame> frames;
  for (uint64_t seq = 0; seq < 11; ++seq) frames.emplace_back(seq, m.n_out());
  for (size_t i = 0; i < 10; ++i) pub.publish(frames[i].slot);  // two full batches go by themselves
  for (int b = 0; b < 2; ++b) {
    auto msg = receive(pull);
    REQUIRE(msg);
    CHECK(msg->topic == "eit/test/imgs");
    REQUIRE(msg->headers.size() == 4);
    for (size_t i = 0; i < 4; ++i) {
      const uint64_t seq = static_cast<uint64_t>(b) * 4 + i;
      CHECK(msg->headers[i].seq == seq);
      CHECK(msg->headers[i].t_acquired_ns == 1000 + static_cast<int64_t>(seq));
      // Restamped when the batch left: one time for the whole message, after the frame's own.
      CHECK(msg->headers[i].t_published_ns == msg->headers[0].t_published_ns);
      CHECK(msg->headers[i].t_published_ns > 2000 + static_cast<int64_t>(seq));
      CHECK(msg->images[i] == frames[seq].image);
    }
  }
  // Frames 8 and 9 wait in the open batch until the queue runs empty.
  zmq::pollitem_t item{pull.handle(), 0, ZMQ_POLLIN, 0};
  CHECK(zmq::poll(&item, 1, std::chrono::milliseconds(200)) == 0);
  pub.flush();
  auto rest = receive(pull);
  REQUIRE(rest);
  CHECK(rest->topic == "eit/test/imgs");
  REQUIRE(rest->headers.size() == 2);
  CHECK(rest->headers[0].seq == 8);
  CHECK(rest->headers[1].seq == 9);
  CHECK(rest->images[1] == frames[9].image);
  pub.flush();  // nothing open: sends nothing

  pub.publish(frames[10].slot);
  pub.flush();
  auto lone = receive(pull);
  REQUIRE(lone);
  CHECK(lone->topic == "eit/test/img");  // a batch of one is the plain message
  REQUIRE(lone->headers.size() == 1);
  CHECK(lone->headers[0].seq == 10);
  CHECK(lone->headers[0].t_published_ns == 2010);  // its own stamp, not restamped
  CHECK(lone->images[0] == frames[10].image);

  pub.end();
  auto end = receive(pull);
  REQUIRE(end);
  CHECK(nlohmann::json::parse(end->json)["type"] == "series-end");
  CHECK(nlohmann::json::parse(end->json)["frames_sent"] == 11);
  CHECK(pub.stats().sent == 11);
  CHECK(pub.stats().dropped == 0);
}

TEST_CASE("end() sends an open batch before the series-end") {
  const auto m = random_model(64);
  PushRig rig(m, 8);
  rig.pub.begin();
  std::vector<TestFrame> frames;
  for (uint64_t seq = 0; seq < 3; ++seq) frames.emplace_back(seq, m.n_out());
  for (auto& f : frames) rig.pub.publish(f.slot);
  rig.pub.end();
  const auto got = rig.images_until_end();
  REQUIRE(got.size() == 1);
  CHECK(got[0].topic == "eit/test/imgs");
  CHECK(got[0].headers.size() == 3);
  CHECK(rig.pub.stats().sent == 3);
}

TEST_CASE("a live batch that no peer takes is counted as that many dropped images") {
  const auto m = random_model(64);
  auto options = loopback_publisher_options(ZmqPattern::kPush, false);  // PUSH with no peer: EAGAIN
  options.publish_batch = 5;
  ZmqPublisher pub(m, options);
  std::vector<TestFrame> frames;
  for (uint64_t seq = 0; seq < 7; ++seq) frames.emplace_back(seq, m.n_out());
  for (auto& f : frames) pub.publish(f.slot);  // a batch of 5 goes (and is dropped) at once
  pub.flush();                                 // then one of 2
  CHECK(pub.stats().sent == 0);
  CHECK(pub.stats().dropped == 7);
}

TEST_CASE("a publisher destroyed with a batch still open neither sends it nor waits for it") {
  const auto m = random_model(64);
  std::vector<TestFrame> frames;
  for (uint64_t seq = 0; seq < 3; ++seq) frames.emplace_back(seq, m.n_out());
  auto options = loopback_publisher_options(ZmqPattern::kPub, false);
  options.publish_batch = 8;
  options.linger_ms = 2000;  // were the open slot taken for a message in flight: a 2.5 s wait
  const auto t0 = std::chrono::steady_clock::now();
  {
    ZmqPublisher pub(m, options);
    for (auto& f : frames) pub.publish(f.slot);
    CHECK(pub.stats().sent == 0);  // still gathering
  }
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2000));
}

TEST_CASE("the publish batch shrinks so that a batch's payload stays within 4 MiB") {
  const auto m = random_model(1024);  // 4 KiB per image: 1024 of them fit in 4 MiB
  auto options = loopback_publisher_options(ZmqPattern::kPub, false);
  options.publish_batch = kMaxImageBatch;
  CHECK(ZmqPublisher(m, options).publish_batch() == kMaxBatchPayloadBytes / (1024 * 4));
  options.publish_batch = 0;
  CHECK_THROWS_WITH_AS(ZmqPublisher(m, options), doctest::Contains("publish batch 0"),
                       std::runtime_error);
}

TEST_CASE("batch decoding refuses parts that disagree") {
  ImageHeader h;
  h.ndim = 1;
  h.shape[0] = 3;
  h.count = 3;
  std::vector<std::byte> headers(2 * sizeof h);
  std::memcpy(headers.data(), &h, sizeof h);
  std::memcpy(headers.data() + sizeof h, &h, sizeof h);
  std::vector<std::byte> payloads(6 * sizeof(float));
  size_t seen = 0;
  const auto count = [&](const ImageHeader&, std::span<const std::byte>) { ++seen; };
  CHECK(for_each_batched_image(headers, payloads, count) == 2);
  CHECK(seen == 2);
  seen = 0;
  CHECK(for_each_batched_image(headers, std::span(payloads).first(5 * sizeof(float)), count) == 0);
  CHECK(for_each_batched_image(std::span(headers).first(sizeof h + 1), payloads, count) == 0);
  CHECK(for_each_batched_image({}, {}, count) == 0);
  ImageHeader bad = h;
  bad.magic = 0;
  std::memcpy(headers.data() + sizeof h, &bad, sizeof bad);
  CHECK(for_each_batched_image(headers, payloads, count) == 0);
  CHECK(seen == 0);  // nothing is handed on from a batch that fails its checks
}

namespace {

// Records the order of publish() and flush() calls (a sink that gathers frames relies on it).
class FlushRecordingSink final : public ImageSink {
 public:
  std::string_view name() const noexcept override { return "flush-recorder"; }
  void publish(const FrameSlot&) noexcept override { note('p'); }
  void flush() noexcept override { note('f'); }
  void end() noexcept override { note('e'); }
  SinkStats stats() const noexcept override { return {}; }
  std::string calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  void note(char c) {
    std::lock_guard lock(mutex_);
    if (c != 'f' || (!calls_.empty() && calls_.back() == 'p')) calls_.push_back(c);  // f after p
  }
  mutable std::mutex mutex_;
  std::string calls_;
};

}  // namespace

TEST_CASE("the pipeline flushes a sink after its last frame, before end()") {
  const auto m = random_model(64);
  const auto frames = random_frames(m, 200);
  VectorSource source(frames);
  FlushRecordingSink sink;
  Pipeline p(m, source, eit::test::cpu_backend(m), {&sink});
  p.start();
  REQUIRE(wait_finished(p));
  const std::string calls = sink.calls();
  CHECK(std::count(calls.begin(), calls.end(), 'p') == 200);
  REQUIRE(calls.size() >= 3);
  CHECK(calls.substr(calls.size() - 3) == "pfe");
  CHECK(calls.find("pe") == std::string::npos);
}

TEST_CASE("a lossless pipeline with publish batch 16 delivers every image once, in order") {
  const auto m = random_model(64);
  const auto frames = random_frames(m, 3000);
  PushRig rig(m, 16);
  VectorSource source(frames);
  const auto p = start_lossless(m, source, rig);
  uint64_t next = 0;
  size_t largest = 0;
  const auto got = rig.images_until_end();
  for (const auto& msg : got) {
    largest = std::max(largest, msg.headers.size());
    CHECK(msg.headers.size() <= 16);
    CHECK((msg.headers.size() == 1) == msg.topic.ends_with("/img"));
    for (const auto& h : msg.headers) REQUIRE(h.seq == next++);
  }
  REQUIRE(wait_finished(*p));
  CHECK(next == frames.size());
  CHECK(rig.pub.stats().sent == frames.size());
  MESSAGE("3000 images in ", got.size(), " messages, largest batch ", largest);
}

TEST_CASE("paced frames with publish batch 64 still leave one by one: nothing waits for a batch") {
  // 5 ms apart, each frame finds the sink's queue empty behind it: flushed alone, as "img". Were
  // the flush missing, all 40 would arrive as one "imgs" message at the end.
  const auto m = random_model(64);
  const auto frames = random_frames(m, 40);
  PushRig rig(m, 64);
  VectorSource inner(frames);
  PacedSource source(inner, PacingOptions{200.0});
  const auto p = start_lossless(m, source, rig);
  size_t images = 0, alone = 0;
  for (const auto& msg : rig.images_until_end()) {
    images += msg.headers.size();
    if (msg.topic.ends_with("/img")) ++alone;
  }
  REQUIRE(wait_finished(*p));
  CHECK(images == frames.size());
  // A loaded machine may hold the sink thread past a period now and then: most, not all.
  CHECK(alone >= frames.size() / 2);
  MESSAGE(alone, " of ", images, " images left alone");
}
