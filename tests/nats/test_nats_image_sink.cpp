// The NATS sink against a real `nats-server -js`: the same bytes as the ZeroMQ wire format, in
// order, acknowledged; an outage never stalls the pipeline and is reported.
#include <doctest/doctest.h>

#include <cstring>
#include <thread>

#include <nlohmann/json.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "../pipeline/pipeline_test_support.hpp"
#include "eit/nats/nats_address.hpp"
#include "eit/nats/nats_image_sink.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/sinks/zmq_publisher.hpp"
#include "nats_server.hpp"
#include "nats_test_support.hpp"

using namespace eit;
using namespace std::chrono_literals;

namespace {

bool run_to_end(pipeline::Pipeline& p, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!p.finished() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(2ms);
  p.wait();
  return p.finished();
}

// The header bytes that do not depend on when or through what they were sent.
sinks::ImageHeader without_send_times(sinks::ImageHeader h) {
  h.t_published_ns = h.t_published_wall_ns = 0;
  return h;
}

}  // namespace

TEST_CASE("NATS images carry the same header and payload bytes as ZeroMQ, in order, all acked") {
  test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const auto m = test::random_model(256);
  const auto frames = test::random_frames(m, 300);
  const auto address = nats::parse_nats_address(server.url() + "?site=ward1&bed=7");

  auto ctx = std::make_shared<zmq::context_t>(1);
  sinks::ZmqPublisherOptions zo;
  zo.endpoint = "tcp://127.0.0.1:*";
  zo.pattern = sinks::ZmqPattern::kPush;
  zo.lossless = true;
  sinks::ZmqPublisher zmq_sink(m, zo, ctx);
  zmq::socket_t pull(*ctx, zmq::socket_type::pull);
  pull.set(zmq::sockopt::rcvtimeo, 10000);
  pull.connect(zmq_sink.endpoint());

  nats::NatsSinkOptions no;
  no.series.series_id = zmq_sink.series_id();  // one series, two transports
  nats::NatsImageSink nats_sink(m, address, no);
  CHECK(nats_sink.image_subject() == "eit.ward1.7.img");

  test::VectorSource source(frames);
  pipeline::Pipeline p(m, source, std::make_unique<pipeline::CpuReconstructor>(m),
                       {&zmq_sink, &nats_sink});
  p.start();
  std::vector<std::pair<std::string, std::string>> over_zmq;  // header, payload
  while (over_zmq.size() < frames.size()) {
    std::vector<zmq::message_t> parts;
    REQUIRE(zmq::recv_multipart(pull, std::back_inserter(parts)));
    if (parts[0].to_string().ends_with("/img")) over_zmq.emplace_back(parts[1].to_string(), parts[2].to_string());
  }
  REQUIRE(run_to_end(p, 60s));

  const auto images = test::fetch_all(server.url(), nats::kImageStream, "eit.ward1.7.img",
                                      frames.size(), 20s);
  REQUIRE(images.size() == frames.size());
  for (size_t i = 0; i < images.size(); ++i) {
    const std::string& data = images[i].data;
    REQUIRE(data.size() == sizeof(sinks::ImageHeader) + over_zmq[i].second.size());
    const auto got = sinks::decode_image_header(
        {reinterpret_cast<const std::byte*>(data.data()), sizeof(sinks::ImageHeader)});
    const auto want = sinks::decode_image_header(
        {reinterpret_cast<const std::byte*>(over_zmq[i].first.data()), over_zmq[i].first.size()});
    REQUIRE(got);
    REQUIRE(want);
    CHECK(got->seq == i);
    const auto a = without_send_times(*got), b = without_send_times(*want);
    CHECK(std::memcmp(&a, &b, sizeof a) == 0);
    CHECK(data.compare(sizeof(sinks::ImageHeader), std::string::npos, over_zmq[i].second) == 0);
  }
  const auto s = nats_sink.nats_stats();
  CHECK(s.acked == frames.size());
  CHECK(s.ack_failures == 0);
  CHECK(s.dropped_full == 0);
  CHECK(nats_sink.stats().sent == frames.size());

  const auto series = test::fetch_all(server.url(), nats::kImageStream, "eit.ward1.7.series", 2, 10s);
  REQUIRE(series.size() >= 2);
  CHECK(nlohmann::json::parse(series.front().data)["type"] == "series");
  const auto last = nlohmann::json::parse(series.back().data);
  CHECK(last["type"] == "series-end");
  CHECK(last["frames_sent"] == frames.size());
}

TEST_CASE("NATS down for a while: the pipeline's other sink gets every frame, the NATS sink "
          "buffers within its bound, counts what it dropped and catches up after the restart") {
  test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const auto m = test::random_model(256);
  // A source paced at ~1 kHz for 4.5 s: NATS is killed after 0.5 s and restarted 1.5 s later,
  // leaving ~2.5 s of frames after the restart (on a loaded machine the server's restart and the
  // settling of the publishes lost with it take up to ~1 s of them).
  const size_t n = 4500;
  const auto frames = test::random_frames(m, n);
  struct PacedSource final : pipeline::Source {
    explicit PacedSource(const std::vector<std::vector<float>>& f) : inner(f) {}
    test::VectorSource inner;
    std::string describe() const override { return "paced"; }
    size_t n_values() const noexcept override { return inner.n_values(); }
    pipeline::ReadStatus read(pipeline::FrameSlot& s, std::chrono::milliseconds t) override {
      std::this_thread::sleep_for(1ms);
      return inner.read(s, t);
    }
    void stop() noexcept override { inner.stop(); }
    pipeline::SourceStats stats() const override { return inner.stats(); }
  } source(frames);

  nats::NatsSinkOptions no;
  no.buffer_frames = 256;                // with libnats' 64 KB, far less than the outage
  no.reconnect_buffer_bytes = 64 * 1024;  // lasts (1.5 s at 1 kHz): drops must be counted
  nats::NatsImageSink nats_sink(m, nats::parse_nats_address(server.url() + "?bed=3"), no);
  test::CollectingSink local(m.n_out());
  pipeline::PipelineOptions po;
  po.policy = pipeline::Policy::kLive;
  pipeline::Pipeline p(m, source, std::make_unique<pipeline::CpuReconstructor>(m),
                       {&local, &nats_sink}, po);
  p.start();
  std::this_thread::sleep_for(500ms);
  server.kill_now();
  std::this_thread::sleep_for(300ms);
  const auto during = nats_sink.nats_stats();
  CHECK_FALSE(during.connected);
  std::this_thread::sleep_for(1200ms);
  const uint64_t acked_before_restart = nats_sink.nats_stats().acked;
  server.start();
  REQUIRE(run_to_end(p, 60s));

  CHECK(local.count() == n);  // the live outputs were unaffected
  CHECK(p.stats().dropped() == 0);
  const auto s = nats_sink.nats_stats();
  MESSAGE("NATS outage: acked " << s.acked << ", dropped (buffer full) " << s.dropped_full
                                << ", abandoned " << s.abandoned << ", retries " << s.retries
                                << ", reconnects " << s.reconnects);
  CHECK(s.dropped_full > 0);  // ~1.5 s at 1 kHz does not fit in 256 buffers + 64 KB
  CHECK(s.reconnects >= 1);
  CHECK(s.acked + s.dropped_full + s.abandoned + s.ack_failures >= n - 256);
  // Stored before the outage, and after the restart more than the buffer held: frames that came
  // once the server was back (how many depends on how fast it restarts on a loaded machine).
  CHECK(acked_before_restart > 100);
  CHECK(s.acked > acked_before_restart + no.buffer_frames);
  CHECK(nats_sink.stats().dropped == s.dropped_full + s.abandoned);
}
