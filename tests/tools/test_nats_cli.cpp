// The CLI through a real `nats-server -js`: a device gateway (`emulate --to nats://…`) puts raw
// frames into JetStream, `run --source nats://…` reconstructs every one of them in order and
// `--publish nats://…` stores the images; a second run on the same bed resumes where the first
// stopped (durable consumer).
#include <doctest/doctest.h>

#include <regex>

#include "../nats/nats_server.hpp"
#include "subprocess.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;

namespace {

struct Counts {
  uint64_t in = 0, published = 0, dropped = 0;
};

Counts summary(const std::string& out) {
  Counts c;
  std::smatch m;
  if (std::regex_search(out, m, std::regex(R"(frames: in (\d+), published (\d+), dropped (\d+))"))) {
    c.in = std::stoull(m[1]);
    c.published = std::stoull(m[2]);
    c.dropped = std::stoull(m[3]);
  }
  return c;
}

uint64_t acked(const std::string& out) {
  std::smatch m;
  return std::regex_search(out, m, std::regex(R"(nats (\d+) acked)")) ? std::stoull(m[1]) : 0;
}

}  // namespace

TEST_CASE("emulate → NATS → run --source nats:// reconstructs every raw frame, in order, and "
          "--publish stores every image, and a second run resumes after the first") {
  eit::test::NatsServer server;
  if (!server.available()) {
    MESSAGE("SKIPPED: nats-server is not installed");
    return;
  }
  const std::string bed = server.url() + "?site=icu&bed=5";
  Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to", bed, "--count",
                     "300", "--unpaced"});
  REQUIRE(device.wait(120s) == 0);
  CHECK(device.out().find("300 frames encoded, 0 sends dropped") != std::string::npos);

  Subprocess first({EITSTREAM_BIN, "run", "--source", bed, "--frames", "200", "--policy",
                    "lossless", "--reference", "first:5", "--endpoint", "tcp://127.0.0.1:*",
                    "--publish", bed, "--quiet"});
  const int first_rc = first.wait(120s);
  INFO("first run's stderr: " << first.err());
  REQUIRE(first_rc == 0);
  const Counts a = summary(first.out());
  CHECK(a.in == 200);
  CHECK(a.published == 200);
  CHECK(a.dropped == 0);
  CHECK(acked(first.out()) == 200);
  CHECK(first.err().find("also publishing to NATS") != std::string::npos);

  // The durable consumer remembers: the remaining 100 frames, starting at seq 200.
  Subprocess second({EITSTREAM_BIN, "run", "--source", bed, "--frames", "100", "--policy",
                     "lossless", "--reference", "first:5", "--endpoint", "tcp://127.0.0.1:*",
                     "--quiet"});
  const int rc = second.wait(120s);
  INFO("second run's stderr: " << second.err() << "\nstdout: " << second.out());
  REQUIRE(rc == 0);
  const Counts b = summary(second.out());
  CHECK(b.in == 100);
  CHECK(second.out().find("frames missing by seq") == std::string::npos);
}
