// `listen nats://…` started before anything was published (the image stream does not exist
// yet) waits for it, as `view` does, instead of exiting with "stream not found", and then gets
// every image published after it started. Against a real `nats-server -js`.
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <thread>

#include "../nats/nats_server.hpp"
#include "subprocess.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;

TEST_CASE("listen started before the bed's stream exists waits and then gets every image") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const std::string bed = server.url() + "?site=icu&bed=3";
  Subprocess listen(
      {EITSTREAM_BIN, "listen", bed, "--summary", "--count", "150", "--timeout", "60"});
  REQUIRE(listen.wait_for_stderr("waiting", 20s));
  CHECK(listen.err().find("stream not found") != std::string::npos);  // says why

  Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to", bed, "--count", "150",
                     "--fps", "100"});
  Subprocess run({EITSTREAM_BIN, "run", "--source", bed, "--frames", "150", "--policy", "lossless",
                  "--reference", "model", "--endpoint", "tcp://127.0.0.1:*", "--publish", bed,
                  "--quiet"});
  REQUIRE(device.wait(120s) == 0);
  REQUIRE(run.wait(120s) == 0);
  REQUIRE(listen.wait(90s) == 0);
  INFO("listen: " << listen.out() << listen.err());
  CHECK(listen.out().find("images 150, missing by seq 0") != std::string::npos);
  CHECK(listen.out().find("series messages 1") != std::string::npos);
}

TEST_CASE("listen waiting for a stream that never comes stops at --timeout") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const auto start = std::chrono::steady_clock::now();
  Subprocess listen(
      {EITSTREAM_BIN, "listen", server.url() + "?site=icu&bed=3", "--summary", "--timeout", "2"});
  REQUIRE(listen.wait(30s) == 0);
  CHECK(std::chrono::steady_clock::now() - start >= 2s);
  CHECK(listen.err().find("waiting") != std::string::npos);
  CHECK(listen.out().find("images 0,") != std::string::npos);
}

TEST_CASE("listen with a malformed since= fails at once instead of waiting") {
  Subprocess listen({EITSTREAM_BIN, "listen", "nats://127.0.0.1:1?site=icu&bed=3&since=soon",
                     "--summary", "--timeout", "30"});
  CHECK(listen.wait(10s) != 0);
  CHECK(listen.err().find("since=soon") != std::string::npos);
}

// The same check as `run --source` (nats::parse_since): an empty since= is no default. It used
// to be read as absent, and listen ran until its timeout with status 0.
TEST_CASE("listen with an empty since= fails at once as run does") {
  Subprocess listen({EITSTREAM_BIN, "listen",
                     "nats://127.0.0.1:1?site=icu&bed=5&since=", "--summary", "--timeout", "1"});
  CHECK(listen.wait(10s) == 1);
  CHECK(listen.err().find("listen: 'nats://127.0.0.1:1?site=icu&bed=5&since=': since= is not "
                          "'all', 'new' or seconds since the epoch") != std::string::npos);
}

#endif  // libnats
