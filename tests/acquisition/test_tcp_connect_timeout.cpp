// The tcp:// client's connect has a timeout of its own, longer than a read's deadline: a device
// whose round trip exceeds one read (the pipeline reads for 50 ms at a time) is still reached,
// and one that never answers is reported as timed out and retried with backoff. The old client
// cancelled every connect at the read deadline and retried it at once, silently.
//
// The slow device lives in a network namespace of a child process: a TUN device whose packets
// come back with source and destination swapped after 100 ms, so that a connect to 10.9.9.2:P
// reaches a listener on 10.9.9.1:P with a 200 ms round trip. Where namespaces or /dev/net/tun
// are not available the case says so and passes.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "eit/acquisition/live_source.hpp"
#include "eit/acquisition/transports.hpp"
#include "live_test_support.hpp"

using namespace eit::acquisition;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kSkipped = 77;

bool write_file(const char* path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  return static_cast<bool>(f.flush());
}

// Root of a new user and network namespace (this process must be single-threaded).
bool enter_network_namespace() {
  if (geteuid() == 0) return unshare(CLONE_NEWNET) == 0;
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return false;
  return write_file("/proc/self/setgroups", "deny") &&
         write_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") &&
         write_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1");
}

bool set_up(int s, const char* name) {
  ifreq r{};
  std::strncpy(r.ifr_name, name, IFNAMSIZ - 1);
  if (ioctl(s, SIOCGIFFLAGS, &r) != 0) return false;
  r.ifr_flags |= IFF_UP | IFF_RUNNING;
  return ioctl(s, SIOCSIFFLAGS, &r) == 0;
}

// The TUN device t0 as 10.9.9.1/24 (so 10.9.9.2 is routed into it), loopback up. -1: failed.
int open_reflecting_tun() {
  const int tun = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
  if (tun < 0) return -1;
  ifreq r{};
  r.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::strncpy(r.ifr_name, "t0", IFNAMSIZ - 1);
  const int s = socket(AF_INET, SOCK_DGRAM, 0);
  bool ok = s >= 0 && ioctl(tun, TUNSETIFF, &r) == 0 && set_up(s, "lo");
  auto set_address = [&](unsigned long request, const char* address) {
    ifreq a{};
    std::strncpy(a.ifr_name, "t0", IFNAMSIZ - 1);
    auto* in = reinterpret_cast<sockaddr_in*>(&a.ifr_addr);
    in->sin_family = AF_INET;
    inet_pton(AF_INET, address, &in->sin_addr);
    return ioctl(s, request, &a) == 0;
  };
  ok = ok && set_address(SIOCSIFADDR, "10.9.9.1") && set_address(SIOCSIFNETMASK, "255.255.255.0") &&
       set_up(s, "t0");
  if (s >= 0) close(s);
  if (!ok) {
    close(tun);
    return -1;
  }
  return tun;
}

// Sends every IPv4 packet routed into the TUN device back with its addresses swapped, `delay`
// later (the checksums stay valid: the pseudo-header sum does not depend on the order).
void reflect(int tun, std::chrono::milliseconds delay, const std::atomic<bool>& done) {
  std::deque<std::pair<Clock::time_point, std::vector<uint8_t>>> due;
  uint8_t packet[65536];
  while (!done) {
    pollfd p{tun, POLLIN, 0};
    poll(&p, 1, 5);
    for (ssize_t n; (n = read(tun, packet, sizeof packet)) >= 20;) {
      if (packet[0] >> 4 != 4) continue;
      std::vector<uint8_t> v(packet, packet + n);
      std::swap_ranges(v.begin() + 12, v.begin() + 16, v.begin() + 16);
      due.emplace_back(Clock::now() + delay, std::move(v));
    }
    while (!due.empty() && due.front().first <= Clock::now()) {
      (void)!write(tun, due.front().second.data(), due.front().second.size());
      due.pop_front();
    }
  }
}

// In the child: a device on 10.9.9.1 that sends "EITF" on accepting, reached through the
// reflector 100 ms each way. 0: the client got the bytes; 1: it did not; kSkipped: no namespace.
int connect_through_slow_path() {
  if (!enter_network_namespace()) return kSkipped;
  const int tun = open_reflecting_tun();
  if (tun < 0) return kSkipped;
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  inet_pton(AF_INET, "10.9.9.1", &a.sin_addr);
  socklen_t len = sizeof a;
  if (bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(listener, 4) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return kSkipped;
  std::atomic<bool> done{false};
  std::thread reflector(reflect, tun, std::chrono::milliseconds(100), std::cref(done));
  std::thread device([&] {
    pollfd p{listener, POLLIN, 0};
    if (poll(&p, 1, 10'000) != 1) return;
    const int fd = accept(listener, nullptr, nullptr);
    (void)!send(fd, "EITF", 4, MSG_NOSIGNAL);
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    close(fd);
  });
  int result = 1;
  {
    auto t = make_tcp_client_transport("10.9.9.2", ntohs(a.sin_port));
    std::vector<uint8_t> buffer(64);
    const auto until = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < until) {
      const auto r = t->read(buffer, Clock::now() + std::chrono::milliseconds(50));
      if (r.status == TransportStatus::kData) {
        result = 0;
        break;
      }
    }
    if (result != 0) std::fprintf(stderr, "last error: %s\n", t->stats().last_error.c_str());
  }
  done = true;
  device.join();
  reflector.join();
  return result;
}

}  // namespace

TEST_CASE("tcp client: a connect whose round trip exceeds a read's deadline completes") {
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) _exit(connect_through_slow_path());
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == kSkipped) {
    MESSAGE("skipped: no network namespace with /dev/net/tun here");
    return;
  }
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("tcp client: a connect that never completes is reported as timed out, with backoff") {
  // A listener whose accept queue is full drops every SYN: the connect hangs as it would
  // towards a device that is switched off behind a router.
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(listen(listener, 0) == 0);
  REQUIRE(getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  const int filler = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(connect(filler, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  const uint16_t port = ntohs(a.sin_port);

  auto source = open_live_source(fmt::format("tcp://127.0.0.1:{}?connect_timeout=0.3", port), {},
                                 eit::test::adjacent16());
  eit::test::OwnedSlot slot(source->n_values());
  std::string error;
  const auto until = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < until && error.find("retrying in 100 ms") == std::string::npos) {
    CHECK(source->read(slot.slot, std::chrono::milliseconds(50)) ==
          eit::pipeline::ReadStatus::kTimeout);
    error = source->stats().last_error;
  }
  CAPTURE(error);
  // The second timed-out attempt, after the first one's 50 ms wait: the backoff grew.
  CHECK(error == fmt::format("tcp://127.0.0.1:{}: connect to 127.0.0.1:{} timed out after 300 ms; "
                             "retrying in 100 ms",
                             port, port));
  close(filler);
  close(listener);
}

TEST_CASE("connect_timeout= is read from the URI and checked") {
  const auto p = eit::test::adjacent16();
  CHECK_THROWS_WITH(open_live_source("tcp://127.0.0.1:9?connect_timeout=0", {}, p),
                    doctest::Contains("connect_timeout=0 s; expected 0.001 to 3600"));
  CHECK_THROWS_WITH(open_live_source("tcp://127.0.0.1:9?connect_timeout=soon", {}, p),
                    doctest::Contains("connect_timeout='soon' is not a number"));
}
