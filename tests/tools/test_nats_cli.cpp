// The CLI through a real `nats-server -js`: a device gateway (`emulate --to nats://…`) puts raw
// frames into JetStream, `run --source nats://…` reconstructs every one of them in order and
// `--publish nats://…` stores the images; a second run on the same bed resumes where the first
// stopped (durable consumer); `listen` and `reconstruct` replay a bed's history from a time.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "../nats/nats_server.hpp"
#include "../nats/wall_clock.hpp"
#include "run_summary_counts.hpp"
#include "subprocess.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;

namespace {

uint64_t acked(const std::string& out) {
  std::smatch m;
  return std::regex_search(out, m, std::regex(R"(nats (\d+) acked)")) ? std::stoull(m[1]) : 0;
}

}  // namespace

TEST_CASE(
    "emulate → NATS → run --source nats:// reconstructs every raw frame, in order, and "
    "--publish stores every image, and a second run resumes after the first") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const std::string bed = server.url() + "?site=icu&bed=5";
  Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to", bed, "--count", "300",
                     "--unpaced"});
  REQUIRE(device.wait(120s) == 0);
  CHECK(device.out().find("300 frames sent, 0 dropped") != std::string::npos);

  Subprocess first({EITSTREAM_BIN, "run", "--source", bed, "--frames", "200", "--policy",
                    "lossless", "--reference", "first:5", "--endpoint", "tcp://127.0.0.1:*",
                    "--publish", bed, "--quiet"});
  const int first_rc = first.wait(120s);
  INFO("first run's stderr: " << first.err());
  REQUIRE(first_rc == 0);
  const auto a = eit::test::run_counts(first.out());
  const auto a_nats = eit::test::sink_counts(first.out(), "nats");
  REQUIRE(a);
  REQUIRE(a_nats);
  CHECK(a->in == 200);
  CHECK(a->reconstructed == 195);  // the first 5 are the reference
  CHECK(first.out().find("taken as the reference 5") != std::string::npos);
  CHECK(a->lost_before_sinks == 0);
  CHECK(a_nats->sent == 200);
  CHECK(a_nats->dropped == 0);
  CHECK(acked(first.out()) == 200);
  CHECK(first.err().find("also publishing to NATS") != std::string::npos);

  // The durable consumer remembers: the remaining 100 frames, starting at seq 200.
  Subprocess second({EITSTREAM_BIN, "run", "--source", bed, "--frames", "100", "--policy",
                     "lossless", "--reference", "first:5", "--endpoint", "tcp://127.0.0.1:*",
                     "--quiet"});
  const int rc = second.wait(120s);
  INFO("second run's stderr: " << second.err() << "\nstdout: " << second.out());
  REQUIRE(rc == 0);
  const auto b = eit::test::run_counts(second.out());
  REQUIRE(b);
  CHECK(b->in == 100);
  CHECK(second.out().find("frames missing by seq") == std::string::npos);
}

TEST_CASE("listen nats://…&since= replays a bed's images from a time, all of them, or none") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const std::string bed = server.url() + "?site=icu&bed=6";
  const auto run = [&](int frames) {
    Subprocess r({EITSTREAM_BIN, "run", "--frames", std::to_string(frames), "--endpoint",
                  "tcp://127.0.0.1:*", "--publish", bed, "--quiet"});
    REQUIRE(r.wait(120s) == 0);
    CHECK(acked(r.out()) == uint64_t(frames));
  };
  run(30);
  std::this_thread::sleep_for(200ms);
  const double between = eit::test::epoch_seconds_early_in_a_second();
  std::this_thread::sleep_for(200ms);
  run(40);
  const auto listen = [&](const std::string& since) {
    Subprocess l({EITSTREAM_BIN, "listen", bed + "&since=" + since, "--summary", "--timeout", "3"});
    REQUIRE(l.wait(60s) == 0);
    std::smatch m;
    const std::string out = l.out();
    REQUIRE(std::regex_search(out, m, std::regex(R"(images (\d+), missing by seq (\d+))")));
    return std::stoull(m[1]);
  };
  CHECK(listen(fmt::format("{:.3f}", between)) == 40);  // the second run's images only
  CHECK(listen("all") == 70);
  CHECK(listen(fmt::format("{:.0f}", between + 3600)) == 0);
}

TEST_CASE("reconstruct nats://…&since= replays a bed's raw frames from JetStream into an image "
          "file, from a time or all of them, and ends when caught up") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const std::string bed = server.url() + "?site=icu&bed=7";
  const auto emulate = [&](int frames, int seq_start) {
    Subprocess d({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to", bed, "--count",
                  std::to_string(frames), "--seq-start", std::to_string(seq_start), "--unpaced"});
    REQUIRE(d.wait(120s) == 0);
  };
  emulate(50, 0);
  std::this_thread::sleep_for(200ms);
  const double between = eit::test::epoch_seconds_early_in_a_second();
  // At once: JetStream stores these frames within the 0.8 s by which libnats alone would have
  // moved the start (the gateway takes about 0.6 s to start, here).
  emulate(70, 50);
  const auto dir = std::filesystem::temp_directory_path() /
                   ("eit-nats-reconstruct-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto replay = [&](const std::string& since, const std::string& name) {
    const std::string out = (dir / name).string();
    Subprocess r({EITSTREAM_BIN, "reconstruct", bed + "&since=" + since, "-o", out, "--quiet"});
    const int rc = r.wait(120s);
    INFO("reconstruct's stderr: " << r.err() << "\nstdout: " << r.out());
    REQUIRE(rc == 0);
    std::smatch m;
    const std::string text = r.out();
    REQUIRE(std::regex_search(text, m,
                              std::regex(R"((\d+) frames → (\d+) images in .*, (\d+) unreadable, (\d+) missing by seq)")));
    CHECK(m[1] == m[2]);
    CHECK(m[3] == "0");
    CHECK(m[4] == "0");
    CHECK(std::filesystem::exists(out));
    return std::stoull(m[2]);
  };
  CHECK(replay(fmt::format("{:.3f}", between), "second.h5") == 70);
  CHECK(replay("all", "all.h5") == 120);
  CHECK(replay(fmt::format("{:.0f}", between + 3600), "none.h5") == 0);
  // A bed that holds nothing (a mistyped bed=): refused, no empty file left as a result.
  const std::string empty = (dir / "empty.h5").string();
  Subprocess none({EITSTREAM_BIN, "reconstruct", server.url() + "?site=icu&bed=99&since=all", "-o",
                   empty, "--quiet"});
  CHECK(none.wait(120s) == 1);
  CHECK(none.err().find("holds no frame of bed icu.99") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(empty));
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}
