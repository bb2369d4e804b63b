// `eitstream run` with a device whose frames are refused for their seq (repeated or behind the
// expected one): the status line and the summary count them, and a device none of whose frames
// is taken any more ends the run like one whose frames are all rejected (exit 5, the reason).
// The old run showed "frames: in 1" and 0.0 frames/s, said nothing and exited 0.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "../acquisition/live_test_support.hpp"
#include "eit/acquisition/ingest_frame.hpp"
#include "subprocess.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;

namespace {

// A device on an ephemeral loopback port that sends frames numbered by `seq_of(k)` every 20 ms
// to whoever connects, until stopped.
class SeqDevice {
 public:
  template <typename SeqOf>
  explicit SeqDevice(SeqOf seq_of) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    REQUIRE(bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(listen(listener_, 4) == 0);
    REQUIRE(getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this, seq_of] {
      pollfd p{listener_, POLLIN, 0};
      if (poll(&p, 1, 30'000) != 1) return;
      const int fd = accept(listener_, nullptr, nullptr);
      using namespace eit::acquisition;
      std::vector<uint8_t> frame(ingest_frame_size(IngestSampleType::kF32, 208));
      for (uint64_t k = 0; !done_; ++k) {
        encode_ingest_frame(frame, IngestSampleType::kF32, seq_of(k), -1,
                            eit::test::test_frame(k, 208));
        if (send(fd, frame.data(), frame.size(), MSG_NOSIGNAL) < 0) break;
        std::this_thread::sleep_for(20ms);
      }
      close(fd);
    });
  }
  ~SeqDevice() {
    done_ = true;
    thread_.join();
    close(listener_);
  }
  std::string uri() const { return "tcp://127.0.0.1:" + std::to_string(port_); }

 private:
  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace

TEST_CASE("run: a device whose seq never advances ends with status 5, frames counted as refused") {
  SeqDevice device([](uint64_t) { return uint64_t{7}; });
  Subprocess run({EITSTREAM_BIN, "run", "--source", device.uri(), "--source-timeout", "1.5",
                  "--duration", "20", "--endpoint", "tcp://127.0.0.1:*", "--backend", "cpu"});
  const int rc = run.wait(60s);
  CAPTURE(run.err());
  CAPTURE(run.out());
  CHECK(rc == 5);
  CHECK(run.err().find("source failed: only rejected frames from " + device.uri() +
                       " for 1.5 s after 1 valid ones") != std::string::npos);
  CHECK(run.err().find("frames dropped by seq (repeated or behind)") != std::string::npos);
  CHECK(run.err().find("| dropped by seq ") != std::string::npos);  // the status line
  CHECK(run.out().find("frames: in 1,") != std::string::npos);
  CHECK(run.out().find("dropped by seq (repeated or behind)") != std::string::npos);
}

TEST_CASE("run: repeated frames among good ones are counted in the summary, the run goes on") {
  // Every sixth frame repeats the seq before it: refused and counted, the rest taken.
  SeqDevice device([](uint64_t k) { return k - k / 6; });  // 0 1 2 3 4 5 5 6 7 8 9 10 10 …
  Subprocess run({EITSTREAM_BIN, "run", "--source", device.uri(), "--source-timeout", "1",
                  "--duration", "2.5", "--endpoint", "tcp://127.0.0.1:*", "--backend", "cpu",
                  "--quiet"});
  const int rc = run.wait(60s);
  CAPTURE(run.err());
  CAPTURE(run.out());
  CHECK(rc == 0);
  CHECK(run.out().find("0 frames missing by seq") != std::string::npos);
  CHECK(run.out().find(" dropped by seq (repeated or behind)") != std::string::npos);
}
