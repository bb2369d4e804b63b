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

using eit::test::CliResult;
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

TEST_CASE(
    "worker emulate and run --source say they wait for a NATS server and keep their deadlines") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  server.kill_now();
  const std::string url = server.url();
  struct Case {
    std::string args;
    int code;
    const char* says;
  };
  const Case cases[] = {
      {"worker " + url + " --model-dir /tmp --duration 2", 1, "gave up waiting for the server"},
      {"emulate --from synthetic --to '" + url + "?site=a&bed=1' --count 10 --wait-s 2", 1,
       "gave up waiting for the server"},
      {"run --source '" + url + "?site=a&bed=1' --source-timeout 2 --quiet", 5, "source failed: "},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const auto t0 = std::chrono::steady_clock::now();
    const eit::test::CliResult r = eit::test::run_eitstream(c.args);
    INFO(r.output);
    CHECK(r.code == c.code);
    CHECK(contains(r.output, "no server answers yet"));  // not silent
    CHECK(contains(r.output, c.says));
    CHECK(std::chrono::steady_clock::now() - t0 < 15s);  // the deadline held, not forever
  }
}

TEST_CASE("replicas a lone server cannot keep are refused naming --replicas") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const CliResult r = eit::test::run_eitstream("worker " + server.url() +
                                               " --model-dir /tmp --replicas 3 --duration 1");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "3 replicas need a JetStream cluster"));
  CHECK(contains(r.output, "--replicas 1"));
}

TEST_CASE("worker and NATS URIs refuse values that would be silently misread") {
  using eit::test::run_eitstream;
  CliResult r = run_eitstream("worker 'nats://127.0.0.1:1?site=icu&bed=1' --model-dir /tmp");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "bed= is not read from a worker's URI"));
  r = run_eitstream("worker nats://127.0.0.1:1 --model-dir /tmp --lease nan");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "--lease nan: expected seconds from 0.4 to 3600"));
  r = run_eitstream("worker nats://127.0.0.1:1 --model-dir /tmp --since 1796510121368");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "not milliseconds"));
  r = run_eitstream("listen 'nats://127.0.0.1:1?site=a&bed=1&since=1796510121368'");
  CHECK(r.code != 0);
  CHECK(contains(r.output, "(milliseconds?)"));
}

#endif  // libnats
