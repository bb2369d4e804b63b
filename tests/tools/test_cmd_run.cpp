#include <doctest/doctest.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <regex>
#include <thread>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "run_summary_counts.hpp"
#include "subprocess.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;

namespace {

// The endpoint `eitstream run` reports on its first stderr line.
std::string bound_endpoint(const std::string& err) {
  std::smatch m;
  if (std::regex_search(err, m, std::regex(R"(on (tcp://127\.0\.0\.1:\d+))"))) return m[1];
  return {};
}

}  // namespace

TEST_CASE("SIGINT stops `eitstream run` cleanly and, lossless, flushes every frame it received") {
  Subprocess run({EITSTREAM_BIN, "run", "--push", "--policy", "lossless", "--fps", "400",
                  "--endpoint", "tcp://127.0.0.1:*", "--quiet"});
  REQUIRE(run.wait_for_stderr("PUSH lossless on tcp://", 120s));
  const std::string endpoint = bound_endpoint(run.err());
  REQUIRE_FALSE(endpoint.empty());
  zmq::context_t ctx(1);
  zmq::socket_t pull(ctx, zmq::socket_type::pull);
  pull.set(zmq::sockopt::rcvtimeo, 10000);
  pull.connect(endpoint);
  uint64_t images = 0, next_seq = 0;
  bool ended = false, in_order = true, interrupted = false;
  while (!ended) {
    std::vector<zmq::message_t> parts;
    REQUIRE(zmq::recv_multipart(pull, std::back_inserter(parts)));
    if (parts[0].to_string().ends_with("/series")) {
      ended = parts[1].to_string().find("series-end") != std::string::npos;
      continue;
    }
    uint64_t seq = 0;
    std::memcpy(&seq, static_cast<const char*>(parts[1].data()) + 24, 8);
    in_order &= seq == next_seq++;
    ++images;
    // Slower than the source, so frames pile up in the queues when the signal arrives.
    std::this_thread::sleep_for(3ms);
    if (images == 100 && !interrupted) {
      run.signal(SIGINT);
      interrupted = true;
    }
  }
  REQUIRE(run.wait(60s) == 0);
  const auto counts = eit::test::run_counts(run.out());
  const auto zmq = eit::test::sink_counts(run.out(), "zmq");
  REQUIRE(counts);
  REQUIRE(zmq);
  const uint64_t in = counts->in;
  CHECK(in >= 100);
  CHECK(counts->reconstructed == in);
  CHECK(counts->lost_before_sinks == 0);
  CHECK(zmq->sent == in);
  CHECK(zmq->dropped == 0);
  CHECK(images == in);
  CHECK(in_order);
}

TEST_CASE("`eitstream listen --pull` receives a whole lossless run and finds no gaps") {
  Subprocess run({EITSTREAM_BIN, "run", "--push", "--policy", "lossless", "--fps", "0", "--frames",
                  "300", "--endpoint", "tcp://127.0.0.1:*", "--quiet"});
  REQUIRE(run.wait_for_stderr("PUSH lossless on tcp://", 120s));
  const std::string endpoint = bound_endpoint(run.err());
  Subprocess listen({EITSTREAM_BIN, "listen", endpoint, "--pull", "--summary", "--exit-on-end",
                     "--timeout", "60"});
  REQUIRE(listen.wait(90s) == 0);
  REQUIRE(run.wait(60s) == 0);
  CHECK(listen.out().find("images 300, missing by seq 0, reported dropped 0, out of order 0, "
                          "malformed 0") != std::string::npos);
  CHECK(listen.out().find("series ended") != std::string::npos);
}

TEST_CASE("an endpoint that cannot be bound is a clear error and a non-zero exit") {
  Subprocess run({EITSTREAM_BIN, "run", "--endpoint", "tcp://256.0.0.1:5555", "--frames", "1"});
  CHECK(run.wait(120s) != 0);
  CHECK(run.err().find("cannot bind PUB socket to 'tcp://256.0.0.1:5555'") != std::string::npos);
}

TEST_CASE("a config file with an unknown key is rejected naming the key") {
  const std::string path = std::string(EIT_BINARY_DIR) + "/test_run_config_bad.json";
  std::ofstream(path) << R"({"fps": 20, "fsp": 30})";
  Subprocess run({EITSTREAM_BIN, "run", "--config", path});
  CHECK(run.wait(60s) != 0);
  CHECK(run.err().find("unknown key 'fsp'") != std::string::npos);
}

TEST_CASE("a config file takes every option by its name including snr and the indices options") {
  const std::string path = std::string(EIT_BINARY_DIR) + "/test_run_config_indices.json";
  std::ofstream(path) << R"({"frames": 40, "fps": 200, "snr": 35, "endpoint": "tcp://127.0.0.1:*",
                             "indices": "tcp://127.0.0.1:*", "indices_layers": 3})";
  Subprocess run({EITSTREAM_BIN, "run", "--config", path, "--quiet"});
  CHECK(run.wait(120s) == 0);
  CAPTURE(run.err());
  CHECK(run.err().find("SNR 35 dB") != std::string::npos);
  CHECK(run.err().find("indices on tcp://127.0.0.1:") != std::string::npos);

  // A value the option refuses names the key; the command line wins over the file.
  std::ofstream(path) << R"({"frames": 10, "indices": "tcp://127.0.0.1:*", "indices_layers": "x"})";
  Subprocess bad({EITSTREAM_BIN, "run", "--config", path, "--quiet"});
  CHECK(bad.wait(60s) == 1);
  CHECK(bad.err().find("key 'indices_layers'") != std::string::npos);
  Subprocess overridden({EITSTREAM_BIN, "run", "--config", path, "--indices-layers", "2", "--fps",
                         "200", "--endpoint", "tcp://127.0.0.1:*", "--quiet"});
  CHECK(overridden.wait(120s) == 0);
}

TEST_CASE("after --duration stops a lossless run one Ctrl-C gives up waiting for the consumer") {
  // No consumer ever connects: the frames wait in the PUSH queue when --duration ends the run.
  Subprocess run({EITSTREAM_BIN, "run", "--push", "--policy", "lossless", "--fps", "200",
                  "--duration", "1", "--endpoint", "tcp://127.0.0.1:*"});
  REQUIRE(run.wait_for_stderr("(lossless); Ctrl-C to give up", 60s));
  const auto asked = std::chrono::steady_clock::now();
  run.signal(SIGINT);
  CHECK(run.wait(60s) == 4);  // lossless delivery incomplete
  // The wait for the consumer is 10 s; the signal ends it at once.
  CHECK(std::chrono::steady_clock::now() - asked < 5s);
  CHECK(run.err().find("Ctrl-C again") == std::string::npos);
  CHECK(run.out().find("frames: in ") != std::string::npos);
}
