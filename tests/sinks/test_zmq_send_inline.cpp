// ZmqPublisherOptions::send_inline: the live publisher runs on the thread that finished the frame
// (no sink queue or thread), every image arrives, in order and correct; lossless or batched
// publishers refuse it at set-up.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

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

TEST_CASE(
    "an inline live publisher sends every image from the producing thread with no sink lane") {
  const auto m = random_model();
  const auto frames = random_frames(m, 400);
  auto ctx = std::make_shared<zmq::context_t>(1);
  auto o = loopback_publisher_options(ZmqPattern::kPush, false);
  o.send_inline = true;
  ZmqPublisher pub(m, o, ctx);
  CHECK(pub.inline_safe());
  zmq::socket_t pull(*ctx, zmq::socket_type::pull);
  pull.set(zmq::sockopt::rcvtimeo, 10000);
  pull.connect(pub.endpoint());
  // Live PUSH drops a frame that finds no peer: let the connection reach the publisher (bounded;
  // not a timing assertion: a late connection shows up as drops, counted below).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  VectorSource frames_source(frames);
  PacedSource source(frames_source, PacingOptions{4000.0});
  PipelineOptions po;
  po.policy = Policy::kLive;
  Pipeline p(m, source, std::make_unique<CpuReconstructor>(m), {&pub}, po);
  p.start();
  std::vector<uint64_t> seqs;
  double worst = 0;
  while (seqs.size() < frames.size()) {
    std::vector<zmq::message_t> parts;
    REQUIRE(zmq::recv_multipart(pull, std::back_inserter(parts)));
    if (!parts.at(0).to_string().ends_with("/img")) continue;
    REQUIRE(parts.size() == 3);
    const auto header =
        decode_image_header({static_cast<const std::byte*>(parts[1].data()), parts[1].size()});
    REQUIRE(header);
    const ImageHeader& h = *header;
    std::vector<float> image(parts[2].size() / sizeof(float));
    std::memcpy(image.data(), parts[2].data(), parts[2].size());
    REQUIRE(h.seq < frames.size());
    worst = std::max(
        worst, eit::test::relative_error(image, expected_image(m, frames[h.seq], m.v_ref, false)));
    seqs.push_back(h.seq);
  }
  REQUIRE(wait_finished(p));
  const auto st = p.stats();
  REQUIRE(st.sink_queues.size() == 1);
  CHECK(st.sink_queues[0].runs_inline);
  CHECK(st.sink_queues[0].delivered == frames.size());
  CHECK(st.sink_queues[0].queue.dropped == 0);
  CHECK(pub.stats().sent == frames.size());
  CHECK(pub.stats().dropped == 0);
  for (size_t i = 0; i < seqs.size(); ++i) REQUIRE(seqs[i] == i);
  CHECK(worst < 2e-5);
}

TEST_CASE("sending inline is refused for a lossless or batching publisher naming both settings") {
  const auto m = random_model(64);
  auto lossless = loopback_publisher_options(ZmqPattern::kPush, true);
  lossless.send_inline = true;
  CHECK_THROWS_WITH(ZmqPublisher(m, lossless),
                    doctest::Contains("takes the live policy and a publish batch of 1; got "
                                      "lossless, batch 1"));
  auto batched = loopback_publisher_options(ZmqPattern::kPub, false);
  batched.send_inline = true;
  batched.publish_batch = 8;
  CHECK_THROWS_WITH(ZmqPublisher(m, batched), doctest::Contains("got live, batch 8"));
  auto lane = loopback_publisher_options(ZmqPattern::kPub, false);
  CHECK_FALSE(ZmqPublisher(m, lane).inline_safe());
}
