// `run --publish nats://…` when no server answers at start: the wait says so, a signal ends it
// with 128 + the signal (the old run blocked inside libnats' connect, ignored SIGINT and SIGTERM
// and --duration, and only SIGKILL ended it), and a server that comes up meanwhile is used.
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include "../nats/nats_server.hpp"
#include "../nats/nats_test_support.hpp"
#include "cli_run.hpp"
#include "subprocess.hpp"

using eit::test::contains;
using eit::test::Subprocess;
using namespace std::chrono_literals;

TEST_CASE("run publishing to NATS with no server says it waits and a signal ends it") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  server.kill_now();  // its port now has no server
  Subprocess run({EITSTREAM_BIN, "run", "--fps", "50", "--duration", "1", "--endpoint",
                  "tcp://127.0.0.1:0", "--publish", server.url() + "?site=icu&bed=3"});
  REQUIRE(run.wait_for_stderr("no server answers yet", 15s));
  const auto t0 = std::chrono::steady_clock::now();
  run.signal(SIGTERM);
  const int status = run.wait(10s);
  INFO(run.err());
  CHECK(status == 128 + SIGTERM);
  CHECK(std::chrono::steady_clock::now() - t0 < 2s);
  CHECK(contains(run.err(), "gave up waiting for the server"));
}

TEST_CASE("run publishing to NATS starts once a server comes up") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  server.kill_now();
  Subprocess run({EITSTREAM_BIN, "run", "--fps", "50", "--duration", "2", "--endpoint",
                  "tcp://127.0.0.1:0", "--publish", server.url() + "?site=icu&bed=4"});
  REQUIRE(run.wait_for_stderr("no server answers yet", 15s));
  server.start();
  const int status = run.wait(60s);
  INFO(run.err());
  CHECK(status == 0);
  CHECK(contains(run.out() + run.err(), "acked"));
}

#endif  // libnats
