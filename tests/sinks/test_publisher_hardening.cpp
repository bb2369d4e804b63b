// Findings of issue 10 against the ZeroMQ publisher, each driven over real loopback sockets:
// a stalled subscriber, a lossless consumer slower than the linger, subscription floods and an
// oversized-message peer. The publisher is driven directly (begin/publish/tick/end) so that the
// frame count is exact.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "../pipeline/pipeline_test_support.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/sinks/zmq_publisher.hpp"
#include "publisher_options.hpp"

using namespace eit::sinks;
using eit::pipeline::FrameSlot;
using eit::test::loopback_publisher_options;

namespace {

int port_of(const std::string& endpoint) {
  return std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
}

// Resident set size of this process in bytes (Linux).
uint64_t rss_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.starts_with("VmRSS:")) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

// Receives images and series messages until the series-end (or 5 s of silence).
struct Collector {
  zmq::socket_t socket;
  std::atomic<bool> greeted{false};
  std::atomic<uint64_t> images{0};
  uint64_t end_frames_sent = UINT64_MAX;
  std::chrono::microseconds pause{0};
  std::thread thread;

  Collector(zmq::context_t& ctx, zmq::socket_type type, const std::string& endpoint)
      : socket(ctx, type) {
    socket.set(zmq::sockopt::rcvtimeo, 5000);
    if (type == zmq::socket_type::sub) socket.set(zmq::sockopt::subscribe, "eit/test/");
    socket.connect(endpoint);
  }
  void start() {
    thread = std::thread([this] {
      while (true) {
        std::vector<zmq::message_t> parts;
        if (!zmq::recv_multipart(socket, std::back_inserter(parts))) return;
        greeted = true;
        if (parts[0].to_string().ends_with("/img")) {
          ++images;
          if (pause.count()) std::this_thread::sleep_for(pause);
          continue;
        }
        const auto j = nlohmann::json::parse(parts.at(1).to_string());
        if (j["type"] == "series-end") {
          end_frames_sent = j["frames_sent"].get<uint64_t>();
          socket.close();  // a lossless consumer hangs up after the series-end (protocol.md)
          return;
        }
      }
    });
  }
  void join() {
    if (thread.joinable()) thread.join();
  }
};

// Announces the series until `c` has heard it (subscriptions take a moment to arrive).
void greet(ZmqPublisher& pub, Collector& c) {
  for (int i = 0; i < 500 && !c.greeted; ++i) {
    pub.begin();
    pub.tick(eit::pipeline::now_ns());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(c.greeted);
}

// Publishes n frames of the model's image size, pacing one every `gap`.
void publish_frames(ZmqPublisher& pub, const eit::recon::Model& m, uint64_t n,
                    std::chrono::microseconds gap) {
  std::vector<float> image(m.n_out(), 0.5f);
  FrameSlot f;
  f.image = image.data();
  for (uint64_t i = 0; i < n; ++i) {
    f.seq = i;
    f.stamp(eit::pipeline::Stage::kReceived, eit::pipeline::now_ns());
    pub.publish(f);
    pub.tick(eit::pipeline::now_ns());
    if (gap.count()) std::this_thread::sleep_for(gap);
  }
}

// A raw ZMTP 3.0 peer (NULL mechanism) speaking as a SUB, for messages no real client would send.
struct RawZmtpPeer {
  int fd = -1;
  explicit RawZmtpPeer(int port) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    std::string greeting(64, '\0');
    greeting[0] = '\xff';
    greeting[9] = '\x7f';
    greeting[10] = 3;
    std::memcpy(&greeting[12], "NULL", 4);
    REQUIRE(put(greeting));
    std::string ready = "\x05READY";
    ready += static_cast<char>(11);
    ready += "Socket-Type";
    ready += std::string("\0\0\0\x03", 4) + "SUB";
    REQUIRE(put(std::string(1, '\x04') + static_cast<char>(ready.size()) + ready));
  }
  ~RawZmtpPeer() { close(fd); }
  bool put(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
};

}  // namespace

TEST_CASE("a stalled subscriber does not hold back a healthy one (PUB drops per subscriber)") {
  const auto m = eit::test::random_model();
  auto ctx = std::make_shared<zmq::context_t>(1);
  auto o = loopback_publisher_options(ZmqPattern::kPub, false);
  // The default queue per peer: 1,000 frames absorb 250 ms in which a loaded machine does not
  // schedule libzmq's I/O thread. The stall is seen in the kernel (TCP_INFO), not in this queue.
  o.send_hwm = 1000;
  auto pub = std::make_unique<ZmqPublisher>(m, o, ctx);
  zmq::socket_t stalled(*ctx, zmq::socket_type::sub);
  stalled.set(zmq::sockopt::rcvhwm, 4);
  stalled.set(zmq::sockopt::rcvbuf, 4096);
  stalled.set(zmq::sockopt::subscribe, "eit/test/");
  stalled.connect(pub->endpoint());
  Collector healthy(*ctx, zmq::socket_type::sub, pub->endpoint());
  healthy.start();
  greet(*pub, healthy);
  constexpr uint64_t kFrames = 4000;
  publish_frames(*pub, m, kFrames, std::chrono::microseconds(250));
  pub->end();
  healthy.join();
  const auto h = pub->health();
  MESSAGE("healthy received ", healthy.images.load(), " of ", kFrames, "; ", pub->health_line());
  CHECK(healthy.images >= kFrames * 999 / 1000);
  CHECK(healthy.end_frames_sent == kFrames);
  CHECK(pub->stats().sent == kFrames);
  // The stall is visible: frames went out while a subscriber's queue was full and not moving.
  CHECK(h.frames_while_stalled > 0);
  CHECK(pub->health_line().find("stalled") != std::string::npos);
}

TEST_CASE("three stalled subscribers count each frame once in the frames published past them") {
  const auto m = eit::test::random_model();
  auto ctx = std::make_shared<zmq::context_t>(1);
  auto o = loopback_publisher_options(ZmqPattern::kPub, false);
  o.send_hwm = 1000;
  auto pub = std::make_unique<ZmqPublisher>(m, o, ctx);
  std::vector<zmq::socket_t> stalled;
  for (int i = 0; i < 3; ++i) {
    stalled.emplace_back(*ctx, zmq::socket_type::sub);
    stalled.back().set(zmq::sockopt::rcvhwm, 4);
    stalled.back().set(zmq::sockopt::rcvbuf, 4096);
    stalled.back().set(zmq::sockopt::subscribe, "eit/test/");
    stalled.back().connect(pub->endpoint());
  }
  Collector healthy(*ctx, zmq::socket_type::sub, pub->endpoint());
  healthy.start();
  greet(*pub, healthy);
  constexpr uint64_t kFrames = 4000;
  publish_frames(*pub, m, kFrames, std::chrono::microseconds(250));
  const auto h = pub->health();
  MESSAGE(pub->health_line());
  pub->end();
  healthy.join();
  CHECK(h.stalled >= 3);
  CHECK(h.frames_while_stalled > 0);
  // The old count summed over the stalled peers: up to 3 × the frames published.
  CHECK(h.frames_while_stalled <= kFrames);
  CHECK(pub->health_line().find("stalled now") != std::string::npos);
}

TEST_CASE("lossless PUSH delivers the tail and the series-end to a consumer slower than linger") {
  const auto m = eit::test::random_model();
  auto ctx = std::make_shared<zmq::context_t>(1);
  auto o = loopback_publisher_options(ZmqPattern::kPush, true);
  o.linger_ms = 200;
  auto pub = std::make_unique<ZmqPublisher>(m, o, ctx);
  Collector consumer(*ctx, zmq::socket_type::pull, pub->endpoint());
  consumer.pause = std::chrono::microseconds(500);
  consumer.start();
  pub->begin();
  constexpr uint64_t kFrames = 2500;
  publish_frames(*pub, m, kFrames, std::chrono::microseconds(0));
  const auto t_end = std::chrono::steady_clock::now();
  pub->end();  // waits for the consumer
  MESSAGE("end() took ",
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t_end).count(), " s; ",
          pub->health_line());
  const auto stats = pub->stats();
  const auto h = pub->health();
  pub.reset();  // closes the socket (a 200 ms linger would discard what is still queued)
  consumer.join();
  MESSAGE("consumer received ", consumer.images.load(), " of ", kFrames);
  CHECK(consumer.images == kFrames);
  CHECK(consumer.end_frames_sent == kFrames);
  CHECK(stats.sent == kFrames);
  CHECK(stats.dropped == 0);
  CHECK(h.undelivered == 0);
  CHECK(h.series_end_delivered);
}

TEST_CASE("lossless PUSH to a consumer that stops reading says how many frames did not leave") {
  const auto m = eit::test::random_model();
  auto ctx = std::make_shared<zmq::context_t>(1);
  auto o = loopback_publisher_options(ZmqPattern::kPush, true);
  o.linger_ms = 0;
  o.send_hwm = 50;
  o.drain_timeout_s = 0.3;
  auto pub = std::make_unique<ZmqPublisher>(m, o, ctx);
  zmq::socket_t pull(*ctx, zmq::socket_type::pull);
  pull.set(zmq::sockopt::rcvhwm, 10);
  pull.set(zmq::sockopt::rcvbuf, 8192);
  pull.connect(pub->endpoint());
  pub->begin();
  // The consumer never reads: publish until a send would block, then abort that one.
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    pub->abort();
  });
  publish_frames(*pub, m, 3000, std::chrono::microseconds(0));
  stopper.join();
  pub->end();
  const auto s = pub->stats();
  const auto h = pub->health();
  MESSAGE("sent ", s.sent, " dropped ", s.dropped, " undelivered ", h.undelivered);
  CHECK(s.sent + s.dropped == 3000);
  CHECK(h.undelivered > 0);
  CHECK(s.dropped >= h.undelivered);
  CHECK_FALSE(h.series_end_delivered);
}

TEST_CASE("a subscription flood and an 8 GiB message declaration cost bounded memory") {
  const auto m = eit::test::random_model();
  auto ctx = std::make_shared<zmq::context_t>(1);
  auto pub =
      std::make_unique<ZmqPublisher>(m, loopback_publisher_options(ZmqPattern::kPub, false), ctx);
  Collector healthy(*ctx, zmq::socket_type::sub, pub->endpoint());
  // Real SUBs in a child process (their own copies of the subscriptions stay out of this RSS);
  // a SUB resends all its subscriptions on every reconnect.
  const int port = port_of(pub->endpoint());
  const uint64_t rss0 = rss_bytes();
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    zmq::context_t cctx(1);
    // wide: 50,000 distinct 1 KiB subscriptions (50 MB); many: 30,000 of 200 bytes (6 MB).
    zmq::socket_t wide(cctx, zmq::socket_type::sub), many(cctx, zmq::socket_type::sub);
    for (auto [socket, count, bytes] :
         {std::tuple{&wide, 50000u, 1024u}, std::tuple{&many, 30000u, 200u}}) {
      std::string topic(bytes, 'x');
      for (unsigned i = 0; i < count; ++i) {
        const std::string digits = fmt::format("{:08}", i);
        std::copy(digits.begin(), digits.end(), topic.begin());
        socket->set(zmq::sockopt::subscribe, topic);
      }
      socket->set(zmq::sockopt::linger, 0);
      socket->connect(fmt::format("tcp://127.0.0.1:{}", port));
    }
    (void)!write(ready[1], "r", 1);
    std::this_thread::sleep_for(std::chrono::seconds(60));  // until the parent kills it
    _exit(0);
  }
  char byte = 0;
  REQUIRE(read(ready[0], &byte, 1) == 1);
  close(ready[0]);
  close(ready[1]);
  healthy.start();
  greet(*pub, healthy);
  std::thread flood([&] {
    // A raw peer declaring one 8 GiB message and sending its first 64 MiB.
    RawZmtpPeer big(port);
    std::string header = "\x02";
    const uint64_t size = uint64_t{8} << 30;
    for (int i = 7; i >= 0; --i) header += static_cast<char>((size >> (8 * i)) & 0xff);
    if (big.put(header))
      for (int i = 0; i < 64 && big.put(std::string(1 << 20, 'y')); ++i) {
      }
  });
  constexpr uint64_t kFrames = 6000;
  publish_frames(*pub, m, kFrames, std::chrono::microseconds(250));
  flood.join();
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  const uint64_t rss1 = rss_bytes();
  pub->end();
  healthy.join();
  const auto h = pub->health();
  MESSAGE("RSS growth ", (rss1 - std::min(rss0, rss1)) >> 20, " MiB; healthy received ",
          healthy.images.load(), " of ", kFrames, "; ", pub->health_line());
  CHECK(rss1 < rss0 + (50u << 20));
  CHECK(healthy.images >= kFrames * 999 / 1000);
  MESSAGE("accepted ", h.accepted, " refused ", h.refused);
  CHECK(h.abusers >= 1);
}
