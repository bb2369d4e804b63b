// `eitstream run --source phantom:breathing?…` names the breathing phantom, with its breathing, on
// its start line and in the series message's `source`, in the words emulate uses. It used to say
// "synthetic phantom (64 positions, …)", the label of the orbiting anomaly.
#include <doctest/doctest.h>

#include <regex>
#include <string>
#include <vector>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "subprocess.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;

namespace {

constexpr const char* kBreathing =
    "breathing phantom (30 breaths/min, tidal drop 0.2, right lung 0.5 s behind, lung radius 0.3";

// The series message of a lossless run of `source`, and the run's stderr.
std::pair<std::string, std::string> series_of(const std::string& source) {
  Subprocess run({EITSTREAM_BIN, "run", "--source", source, "--push", "--policy", "lossless",
                  "--frames", "5", "--endpoint", "tcp://127.0.0.1:*", "--backend", "cpu",
                  "--quiet"});
  REQUIRE(run.wait_for_stderr("PUSH lossless on tcp://", 120s));
  std::smatch m;
  const std::string err = run.err();
  REQUIRE(std::regex_search(err, m, std::regex(R"(on (tcp://127\.0\.0\.1:\d+))")));
  zmq::context_t ctx(1);
  zmq::socket_t pull(ctx, zmq::socket_type::pull);
  pull.set(zmq::sockopt::rcvtimeo, 30000);
  pull.connect(m[1].str());
  std::string series;
  for (bool ended = false; !ended;) {
    std::vector<zmq::message_t> parts;
    REQUIRE(zmq::recv_multipart(pull, std::back_inserter(parts)));
    if (!parts[0].to_string().ends_with("/series")) continue;
    const std::string body = parts[1].to_string();
    ended = body.find("series-end") != std::string::npos;
    if (!ended) series = body;
  }
  pull.close();  // a lossless consumer hangs up after the series-end; the run waits for that
  REQUIRE(run.wait(60s) == 0);
  return {series, run.err()};
}

}  // namespace

TEST_CASE("run labels the breathing phantom as such on its start line and in the series source") {
  const auto [series, err] =
      series_of("phantom:breathing?rate=30&tidal=0.2&delay=0.5&lung=0.3&positions=16");
  const std::string label = std::string(kBreathing) + ", 16 positions, SNR 60 dB, 50 frames/s)";
  CAPTURE(err);
  CAPTURE(series);
  CHECK(err.find("eitstream: " + label + " → model") != std::string::npos);
  CHECK(series.find("\"source\":\"" + label + "\"") != std::string::npos);
  CHECK(err.find("synthetic phantom (") == std::string::npos);
}

TEST_CASE("emulate labels the breathing phantom with the same words") {
  Subprocess emulate({EITSTREAM_BIN, "emulate", "--from",
                      "phantom:breathing?rate=30&tidal=0.2&delay=0.5&lung=0.3&positions=16",
                      "--count", "1", "--unpaced", "--to", "udp://127.0.0.1:9"});
  REQUIRE(emulate.wait(120s) == 0);
  CHECK(emulate.out().find("emulate: " + std::string(kBreathing) + ", SNR 60 dB)") !=
        std::string::npos);
}

TEST_CASE("run still labels the orbiting anomaly the synthetic phantom") {
  const auto [series, err] = series_of("synthetic");
  CHECK(series.find("\"source\":\"synthetic phantom (64 positions, SNR 60 dB, 50 frames/s)\"") !=
        std::string::npos);
}
