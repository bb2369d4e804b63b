// Silent TCP peers, on real loopback sockets: a tcp-listen source whose first connection never
// sends must still get the device connecting after it; a tcp:// client whose device goes silent
// must notice, reconnect and back off; keepalive is set on the sockets. Each case reproduces a
// finding of issue 10 (the old transports read a silent connection forever).
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "eit/acquisition/device_link.hpp"
#include "eit/acquisition/ingest_frame.hpp"
#include "eit/acquisition/live_source.hpp"
#include "eit/acquisition/tcp_liveness.hpp"
#include "eit/acquisition/transports.hpp"
#include "fd_exhaustion.hpp"
#include "live_test_support.hpp"

using namespace eit::acquisition;
using eit::test::read_frames;
using eit::test::test_frame;

namespace {

constexpr size_t kN = 208;

std::vector<uint8_t> ingest(uint64_t seq) {
  std::vector<uint8_t> out(ingest_frame_size(IngestSampleType::kF32, kN));
  REQUIRE(encode_ingest_frame(out, IngestSampleType::kF32, seq, -1, test_frame(seq, kN)) ==
          out.size());
  return out;
}

// A plain loopback socket, closed on scope exit.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// CPU time this thread has used, in ms: tells a wait from a spin.
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

uint16_t port_of(const std::string& endpoint) {
  return static_cast<uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
}

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// Connects and sends nothing (a port scanner, a stuck client, a misconfigured device).
int connect_silently(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  const sockaddr_in a = loopback(port);
  REQUIRE(connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0);
  return fd;
}

// A listening "device" on an ephemeral loopback port.
int listen_any(uint16_t& port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a = loopback(0);
  REQUIRE(bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0);
  REQUIRE(listen(fd, 4) == 0);
  socklen_t len = sizeof(a);
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  port = ntohs(a.sin_port);
  return fd;
}

// accept() with a bound wait; -1 when nobody connected in time.
int accept_within(int listener, int ms) {
  pollfd p{listener, POLLIN, 0};
  if (poll(&p, 1, ms) != 1) return -1;
  return accept(listener, nullptr, nullptr);
}

// Waits (bounded) until the peer closes the connection; true when it did.
bool peer_closes_within(int fd, int ms) {
  char b[256];
  for (int waited = 0; waited < ms; waited += 50) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) == 1) {
      const ssize_t n = recv(fd, b, sizeof(b), 0);
      if (n <= 0) return true;
    }
  }
  return false;
}

void send_frames(int fd, uint64_t first, uint64_t last) {
  for (uint64_t s = first; s < last; ++s) {
    const auto f = ingest(s);
    if (send(fd, f.data(), f.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(f.size())) return;
  }
}

}  // namespace

TEST_CASE("tcp-listen: a silent first connection does not starve the device that connects next") {
  // Old behaviour: the silent connection was read forever; the device sat in the backlog and
  // 0 frames arrived.
  auto source = open_live_source("tcp-listen://127.0.0.1:0?idle=0.3", {}, eit::test::adjacent16());
  const uint16_t port = port_of(source->endpoint());
  Fd silent(connect_silently(port));
  eit::test::OwnedSlot s(kN);
  // The source accepts the silent peer first (it is first in the backlog).
  CHECK(source->read(s.slot, std::chrono::milliseconds(100)) ==
        eit::pipeline::ReadStatus::kTimeout);
  auto link = open_device_link("tcp://127.0.0.1:" + std::to_string(port));
  std::thread device([&] {
    REQUIRE(link->wait_for_receiver(std::chrono::seconds(10)));
    for (uint64_t k = 0; k < 50; ++k) link->send(ingest(k));
  });
  const auto got = read_frames(*source, 50);
  device.join();
  REQUIRE(got.size() == 50);
  CHECK(got[49].seq == 49);
  const auto st = source->stats();
  CHECK(st.reconnects == 1);  // the device's connection, after the silent one was closed
  CHECK(st.last_error.find("idle timeout") != std::string::npos);
  // The silent peer was disconnected by the source.
  CHECK(peer_closes_within(silent.fd, 2000));
}

TEST_CASE("tcp-listen: idle=0 keeps a silent connection (the timeout can be turned off)") {
  auto source = open_live_source("tcp-listen://127.0.0.1:0?idle=0", {}, eit::test::adjacent16());
  Fd silent(connect_silently(port_of(source->endpoint())));
  eit::test::OwnedSlot s(kN);
  for (int i = 0; i < 5; ++i) source->read(s.slot, std::chrono::milliseconds(100));
  CHECK_FALSE(peer_closes_within(silent.fd, 200));
  CHECK(source->stats().last_error.empty());
}

TEST_CASE("tcp client: a device that goes silent is detected and the client reconnects") {
  // Old behaviour: the client waited on the silent connection forever (10 of 20 frames).
  uint16_t port = 0;
  Fd listener(listen_any(port));
  std::atomic<bool> served{false};
  std::thread device([&] {
    Fd first(accept_within(listener.fd, 10000));
    if (first.fd < 0) return;
    send_frames(first.fd, 0, 10);  // then silence, connection kept open
    Fd second(accept_within(listener.fd, 10000));
    if (second.fd < 0) return;  // (checked below through `served`)
    send_frames(second.fd, 10, 20);
    served = true;
    peer_closes_within(second.fd, 3000);
  });
  auto source = open_live_source("tcp://127.0.0.1:" + std::to_string(port) + "?idle=0.3", {},
                                 eit::test::adjacent16());
  const auto got = read_frames(*source, 20);
  source->stop();
  device.join();
  CHECK(served);
  REQUIRE(got.size() == 20);
  CHECK(got[19].seq == 19);
  const auto st = source->stats();
  CHECK(st.reconnects == 1);
  CHECK(st.seq_gaps == 0);
  CHECK(st.last_error.find("idle timeout") != std::string::npos);
}

TEST_CASE("tcp client: a device that accepts but never sends is retried with growing backoff") {
  // Three silent connections closed by the idle timeout: 50, 100, 200 ms between them; then the
  // device stops listening and the refused connects go on from 400 ms (the old client reset the
  // backoff on every connect, and never closed a silent connection at all). Counted by the
  // transport itself: a connect abandoned at a read deadline can reach the device's accept too.
  uint16_t port = 0;
  auto listener = std::make_unique<Fd>(listen_any(port));
  std::atomic<bool> stop_listening{false};
  std::vector<std::unique_ptr<Fd>> silent;  // accepted and kept open, never written to
  std::thread device([&] {
    while (!stop_listening) {
      const int fd = accept_within(listener->fd, 20);
      if (fd >= 0) silent.push_back(std::make_unique<Fd>(fd));
    }
    listener.reset();  // nothing listens any more: connects are refused
  });
  TcpLiveness liveness;
  liveness.idle = std::chrono::milliseconds(100);
  auto t = make_tcp_client_transport(
      "127.0.0.1", port,
      ReconnectPolicy{std::chrono::milliseconds(50), std::chrono::milliseconds(400), 2}, liveness);
  std::vector<uint8_t> buffer(4096);
  std::string error;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < until) {
    t->read(buffer, ByteTransport::Clock::now() + std::chrono::milliseconds(50));
    const auto st = t->stats();
    if (st.idle_timeouts >= 3) stop_listening = true;
    error = st.last_error;
    if (stop_listening && error.find("connect failed") != std::string::npos) break;
  }
  stop_listening = true;
  device.join();
  CHECK(t->stats().idle_timeouts >= 3);
  CAPTURE(error);
  CHECK(error.find("connect failed") != std::string::npos);
  CHECK(error.find("retrying in 400 ms") != std::string::npos);
}

TEST_CASE("keepalive is set with short probe times on a TCP socket") {
  uint16_t port = 0;
  Fd listener(listen_any(port));
  Fd c(connect_silently(port));
  TcpLiveness l;
  l.keepalive_idle_s = 7;
  l.keepalive_interval_s = 2;
  l.keepalive_count = 4;
  REQUIRE(apply_tcp_keepalive(c.fd, l));
  auto get = [&](int level, int name) {
    int v = -1;
    socklen_t len = sizeof(v);
    REQUIRE(getsockopt(c.fd, level, name, &v, &len) == 0);
    return v;
  };
  CHECK(get(SOL_SOCKET, SO_KEEPALIVE) == 1);
  CHECK(get(IPPROTO_TCP, TCP_KEEPIDLE) == 7);
  CHECK(get(IPPROTO_TCP, TCP_KEEPINTVL) == 2);
  CHECK(get(IPPROTO_TCP, TCP_KEEPCNT) == 4);
  l.keepalive = false;
  REQUIRE(apply_tcp_keepalive(c.fd, l));
  CHECK(get(SOL_SOCKET, SO_KEEPALIVE) == 0);
}

TEST_CASE("the default idle timeout is five frame periods, at least 0.25 s, 2 s without a rate") {
  CHECK(default_idle_timeout(50).count() == 250);
  CHECK(default_idle_timeout(10).count() == 500);
  CHECK(default_idle_timeout(1000).count() == 250);
  CHECK(default_idle_timeout(0).count() == 2000);
  CHECK_THROWS_WITH_AS(open_live_source("tcp://127.0.0.1:9?idle=abc", {}, eit::test::adjacent16()),
                       doctest::Contains("idle"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      open_live_source("tcp://127.0.0.1:9?keepalive=yes", {}, eit::test::adjacent16()),
      doctest::Contains("keepalive"), std::invalid_argument);
}

TEST_CASE(
    "tcp-listen: out of file descriptors the source waits between accepts instead of spinning") {
  auto source = open_live_source("tcp-listen://127.0.0.1:0", {}, eit::test::adjacent16());
  const uint16_t port = port_of(source->endpoint());
  // The device's socket exists before the descriptors run out; its connection then waits in the
  // listen backlog, where every accept() fails with EMFILE.
  Fd device(socket(AF_INET, SOCK_STREAM, 0));
  REQUIRE(device.fd >= 0);
  eit::test::OwnedSlot s(kN);
  double cpu_ms = 0;
  {
    eit::test::FdExhaustion exhausted;
    const sockaddr_in a = loopback(port);
    REQUIRE(connect(device.fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0);
    // The old loop never returned from read(): stop the source if the reads outlast 3 s.
    std::atomic<bool> reads_done{false};
    std::thread watchdog([&] {
      for (int waited = 0; waited < 3000 && !reads_done; waited += 10)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (!reads_done) source->stop();
    });
    const double before = thread_cpu_ms();
    for (int i = 0; i < 6; ++i)
      CHECK(source->read(s.slot, std::chrono::milliseconds(100)) ==
            eit::pipeline::ReadStatus::kTimeout);
    cpu_ms = thread_cpu_ms() - before;
    reads_done = true;
    watchdog.join();
  }
  INFO("CPU time of 600 ms of reads while accept() failed: " << cpu_ms << " ms");
  CHECK(cpu_ms < 150);  // the old loop re-accepted at once: ~600 ms, a whole core
  CHECK(source->stats().last_error.find("accept failed") != std::string::npos);
  // Descriptors back: the waiting device is accepted and its frames read.
  send_frames(device.fd, 0, 3);
  const auto got = read_frames(*source, 3);
  REQUIRE(got.size() == 3);
  CHECK(got[2].seq == 2);
}
