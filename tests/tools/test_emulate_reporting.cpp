// What `eitstream emulate` says about what it does, checked against what a receiver sees: the
// summary after Ctrl-C (and how soon it comes when the receiver reads nothing), the sent and
// dropped counts, the pace on the start line, the address a listening socket was bound to, and a
// pty that waits for its reader.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../acquisition/live_test_support.hpp"
#include "eit/acquisition/live_source.hpp"
#include "emulate_process.hpp"
#include "raw_test_recording.hpp"

using namespace std::chrono_literals;
using eit::acquisition::open_live_source;
using eit::test::EmulateProcess;
using eit::test::read_frames;
using eit::test::test_frame;

namespace {

constexpr size_t kN = 208;
constexpr size_t kFrames = 40;

std::vector<std::string> raw_args(std::vector<std::string> more) {
  static const eit::test::RawTestRecording recording("eitstream_emulate_reporting", kFrames, kN);
  std::vector<std::string> a = {"--from", recording.path(),     "--recording-format",
                                "f32",    "--values-per-frame", std::to_string(kN)};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// "N frames sent, M dropped" from the summary line (what follows "emulate: done: "); false when
// it does not start so.
bool summary_counts(const std::string& summary, uint64_t& sent, uint64_t& dropped) {
  std::smatch m;
  if (!std::regex_search(summary, m, std::regex(R"(^(\d+) frames sent, (\d+) dropped)")))
    return false;
  sent = std::stoull(m[1]);
  dropped = std::stoull(m[2]);
  return true;
}

}  // namespace

TEST_CASE("emulate stopped by SIGINT or SIGTERM prints its summary and exits 0") {
  for (const int sig : {SIGINT, SIGTERM}) {
    CAPTURE(sig);
    auto source = open_live_source("udp://127.0.0.1:0", {}, eit::test::adjacent16());
    EmulateProcess emulate(
        raw_args({"--to", "udp://" + source->endpoint(), "--fps", "200", "--loop"}));
    REQUIRE(emulate.line_after("emulate: send") == "ing");
    const auto got = read_frames(*source, 10);
    REQUIRE(got.size() == 10);
    emulate.kill(sig);
    const std::string summary = emulate.line_after("emulate: done: ", 20s);
    CAPTURE(emulate.output());
    CHECK(emulate.wait() == 0);
    CHECK(summary.find("(stopped by a signal)") != std::string::npos);
    uint64_t sent = 0, dropped = 0;
    REQUIRE(summary_counts(summary, sent, dropped));
    CHECK(sent >= 10);
    CHECK(dropped == 0);
  }
}

TEST_CASE(
    "emulate stopped by a signal while its receiver reads nothing exits at once and says "
    "how many frames were not received") {
  EmulateProcess emulate(raw_args({"--to", "pty", "--fps", "500", "--loop"}));
  const std::string port = emulate.line_after("endpoint: ");
  REQUIRE(port.rfind("/dev/", 0) == 0);
  const int reader = ::open(port.c_str(), O_RDONLY | O_NOCTTY);  // opened, never read
  REQUIRE(reader >= 0);
  REQUIRE(emulate.line_after("emulate: send") == "ing");
  std::this_thread::sleep_for(1s);  // the port's buffer fills; emulate then waits for room
  const auto t0 = std::chrono::steady_clock::now();
  emulate.kill(SIGINT);
  const std::string summary = emulate.line_after("emulate: done: ", 20s);
  const auto took = std::chrono::steady_clock::now() - t0;
  CAPTURE(emulate.output());
  CHECK(emulate.wait() == 0);
  ::close(reader);
  CHECK(took < 3s);  // the wait after a signal is 0.5 s (it was the 5 s of a normal end)
  CHECK(summary.find("(stopped by a signal)") != std::string::npos);
  std::smatch m;
  const std::regex note(R"(\(at least (\d+) frames not received when emulate stopped waiting, )"
                        R"(after 0\.\d\d s\))");
  REQUIRE(std::regex_search(summary, m, note));
  CHECK(std::stoull(m[1]) > 0);
}

TEST_CASE("emulate counts frames the link dropped apart from the frames it sent") {
  // A receiver that reads 5 frames and goes: the rest of the 400 cannot be sent.
  EmulateProcess emulate(
      raw_args({"--to", "tcp-listen://127.0.0.1:0", "--fps", "400", "--loop", "--count", "400"}));
  const std::string receiver = emulate.line_after("receiver: ");
  REQUIRE_FALSE(receiver.empty());
  {
    auto source = open_live_source(receiver, {}, eit::test::adjacent16());
    REQUIRE(read_frames(*source, 5).size() == 5);
  }
  const std::string summary = emulate.line_after("emulate: done: ");
  CAPTURE(emulate.output());
  REQUIRE(emulate.wait() == 0);
  uint64_t sent = 0, dropped = 0;
  REQUIRE(summary_counts(summary, sent, dropped));
  CHECK(sent >= 5);
  CHECK(dropped > 0);
  CHECK(sent + dropped == 400);
}

TEST_CASE("emulate's start lines say the pace it sends at and never unpaced when paced") {
  // Everything emulate printed up to its summary.
  const auto printed = [](EmulateProcess& emulate) {
    emulate.line_after("emulate: done: ");
    CHECK(emulate.wait() == 0);
    return emulate.output();
  };
  EmulateProcess paced(
      raw_args({"--to", "file:///dev/null", "--fps", "50", "--speed", "2", "--count", "3"}));
  const std::string paced_out = printed(paced);
  CAPTURE(paced_out);
  CHECK(paced_out.find("paced at 100 frames/s (--fps × --speed 2)") != std::string::npos);
  CHECK(paced_out.find("unpaced") == std::string::npos);
  CHECK(paced_out.find("as fast as possible") == std::string::npos);

  EmulateProcess synthetic(
      {"--from", "synthetic", "--h0", "0.2", "--to", "file:///dev/null", "--count", "3"});
  const std::string synthetic_out = printed(synthetic);
  CAPTURE(synthetic_out);
  CHECK(synthetic_out.find("paced at 20 frames/s (the default 20)") != std::string::npos);
  CHECK(synthetic_out.find("unpaced") == std::string::npos);

  EmulateProcess unpaced(raw_args({"--to", "file:///dev/null", "--unpaced", "--count", "3"}));
  const std::string unpaced_out = printed(unpaced);
  CAPTURE(unpaced_out);
  CHECK(unpaced_out.find(", unpaced (as fast as the link takes them)") != std::string::npos);
  CHECK(unpaced_out.find("paced at") == std::string::npos);
}

TEST_CASE("emulate tcp-listen on 0.0.0.0 shows the bound address and a receiver URI that works") {
  EmulateProcess emulate(
      raw_args({"--to", "tcp-listen://0.0.0.0:0", "--fps", "400", "--count", "10"}));
  const std::string endpoint = emulate.line_after("endpoint: ");
  const std::string receiver = emulate.line_after("receiver: ");
  CAPTURE(emulate.output());
  REQUIRE(endpoint.rfind("0.0.0.0:", 0) == 0);
  const std::string port = endpoint.substr(endpoint.find(':') + 1);
  CHECK(receiver == "tcp://127.0.0.1:" + port + "?format=ingest");
  CHECK(emulate.line_after("emulate: listening on every interface") != "");
  auto source = open_live_source(receiver, {}, eit::test::adjacent16());
  CHECK(read_frames(*source, 10).size() == 10);
  CHECK(emulate.wait() == 0);
}

TEST_CASE("emulate pty waits for the port to be opened and sends only fresh frames to it") {
  EmulateProcess emulate(raw_args({"--to", "pty", "--fps", "40", "--count", "20"}));
  const std::string receiver = emulate.line_after("receiver: ");
  REQUIRE(receiver.rfind("serial:///dev/", 0) == 0);
  CHECK(emulate.line_after("emulate: waiting for a receiver on pty") != "");
  // Nobody has the port open: nothing may be sent (the frames would wait in the tty buffer and
  // reach a later reader as a stale burst).
  CHECK(emulate.line_after("emulate: send", 1500ms) == "");
  auto source = open_live_source(receiver, {}, eit::test::adjacent16());
  const auto got = read_frames(*source, 20);
  CHECK(emulate.line_after("emulate: send") == "ing");
  REQUIRE(got.size() == 20);
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].seq == i);
    CHECK(got[i].values == test_frame(i, kN));
  }
  // Paced from the moment the port opened, not a burst of frames written before: 19 periods of
  // 25 ms at least between the first and the last.
  CHECK(got.back().received_ns - got.front().received_ns >= 19 * 25'000'000LL - 5'000'000LL);
  const std::string summary = emulate.line_after("emulate: done: ");
  CAPTURE(emulate.output());
  CHECK(emulate.wait() == 0);
  CHECK(summary.rfind("20 frames sent, 0 dropped", 0) == 0);
}

TEST_CASE("emulate pty: a reader that goes counts drops and the next one gets no stale bytes") {
  EmulateProcess emulate(raw_args({"--to", "pty", "--fps", "100", "--loop", "--count", "300"}));
  const std::string receiver = emulate.line_after("receiver: ");
  REQUIRE(receiver.rfind("serial:///dev/", 0) == 0);
  {
    auto first = open_live_source(receiver, {}, eit::test::adjacent16());
    REQUIRE(read_frames(*first, 5).size() == 5);
  }
  std::this_thread::sleep_for(300ms);  // frames meanwhile are dropped, not piled up
  auto second = open_live_source(receiver, {}, eit::test::adjacent16());
  const auto got = read_frames(*second, 10);
  REQUIRE(got.size() == 10);
  CHECK(second->stats().bad_frames == 0);
  CHECK(second->stats().bytes_skipped == 0);
  for (size_t i = 1; i < got.size(); ++i) CHECK(got[i].seq == got[0].seq + i);
  second.reset();
  const std::string summary = emulate.line_after("emulate: done: ");
  CAPTURE(emulate.output());
  CHECK(emulate.wait() == 0);
  uint64_t sent = 0, dropped = 0;
  REQUIRE(summary_counts(summary, sent, dropped));
  CHECK(dropped >= 10);
  CHECK(sent + dropped == 300);
}
