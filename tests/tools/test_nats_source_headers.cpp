// `run --source nats://…` and what a gateway states on each raw frame: Eit-Rate, the rate the
// device measures at, is the source's nominal rate when --fps is not given (it went unused: the
// series message said rate_hz 0); an explicit --fps wins, with a warning when they differ.
// Against a real `nats-server -js`.
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <string>

#include <nlohmann/json.hpp>

#include "../nats/nats_server.hpp"
#include "../nats/nats_test_support.hpp"
#include "subprocess.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;

namespace {

// The rate_hz of the series messages published for `bed` (site icu); -1 when there is none.
double series_rate(const eit::test::NatsServer& server, const std::string& bed) {
  double rate = -1;
  for (const auto& m :
       eit::test::fetch_all(server.url(), "EIT_IMAGES", "eit.icu." + bed + ".series", 100, 3s)) {
    const auto json = nlohmann::json::parse(m.data);
    if (json["type"] == "series") rate = json["rate_hz"].get<double>();  // not the series-end
  }
  return rate;
}

void emulate(const eit::test::NatsServer& server, const std::string& bed, int count) {
  Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to",
                     server.url() + "?site=icu&bed=" + bed, "--fps", "12.5", "--count",
                     std::to_string(count), "--unpaced"});
  REQUIRE(device.wait(120s) == 0);
}

Subprocess run_source(const eit::test::NatsServer& server, const std::string& bed,
                      const std::string& publish_bed, int frames,
                      std::vector<std::string> more = {}) {
  std::vector<std::string> args{EITSTREAM_BIN, "run",
                                "--source",    server.url() + "?site=icu&bed=" + bed,
                                "--frames",    std::to_string(frames),
                                "--policy",    "lossless",
                                "--reference", "first:5",
                                "--endpoint",  "tcp://127.0.0.1:*",
                                "--publish",   server.url() + "?site=icu&bed=" + publish_bed,
                                "--quiet"};
  args.insert(args.end(), more.begin(), more.end());
  return Subprocess(args);
}

}  // namespace

TEST_CASE(
    "run --source nats:// takes its nominal rate from the raw frames' Eit-Rate when --fps is "
    "not given") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  emulate(server, "8", 40);
  // Frames pending for the consumer: the first one it delivers states the rate.
  Subprocess first = run_source(server, "8", "80", 40);
  REQUIRE(first.wait(120s) == 0);
  INFO("first run's stderr: " << first.err());
  CHECK(series_rate(server, "80") == 12.5);
  CHECK(first.err().find("warning") == std::string::npos);

  // Nothing pending (the consumer has read everything): the last frame stored states it.
  Subprocess second = run_source(server, "8", "81", 10);
  REQUIRE(second.wait_for_stderr("also publishing to NATS", 60s));
  emulate(server, "8", 10);
  REQUIRE(second.wait(120s) == 0);
  CHECK(series_rate(server, "81") == 12.5);
}

TEST_CASE("an explicit --fps wins over the raw frames' Eit-Rate and a warning says so") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  emulate(server, "8", 20);
  Subprocess run = run_source(server, "8", "80", 20, {"--fps", "25"});
  REQUIRE(run.wait(120s) == 0);
  INFO("stderr: " << run.err());
  CHECK(run.err().find("warning: --fps 25 wins over the 12.5 frames/s the raw frames on "
                       "eit.icu.8.raw state (Eit-Rate)") != std::string::npos);
  CHECK(series_rate(server, "80") == 25);
}

#endif  // libnats
