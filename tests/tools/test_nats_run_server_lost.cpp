// `run --publish nats://…` whose server is killed mid-run: at the stop the run says it waits for
// JetStream (up to 5 s) instead of printing a frozen status line, a second Ctrl-C ends that wait
// at once, the series-end's own 2 s wait is skipped without a server, and the summary counts the
// images never stored once (dropped), not also as backlog.
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <chrono>
#include <csignal>
#include <regex>
#include <string>
#include <thread>

#include "../nats/nats_server.hpp"
#include "../nats/nats_test_support.hpp"
#include "cli_run.hpp"
#include "subprocess.hpp"

using eit::test::contains;
using eit::test::Subprocess;
using namespace std::chrono_literals;

TEST_CASE("run publishing to a NATS server that died says it waits and a second signal ends it") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  Subprocess run({EITSTREAM_BIN, "run", "--fps", "50", "--endpoint", "tcp://127.0.0.1:0",
                  "--publish", server.url() + "?site=icu&bed=2"});
  REQUIRE(run.wait_for_stderr("acked", 30s));  // the status line's NATS part: connected
  std::this_thread::sleep_for(500ms);
  server.kill_now();
  std::this_thread::sleep_for(1500ms);  // images pile up unstored
  run.signal(SIGINT);
  // Old: no word; the status line froze for ~7 s (5 s for the backlog, 2 s for the series end).
  CHECK(run.wait_for_stderr("eitstream: stopping: waiting up to 5 s for NATS to store", 10s));
  CHECK(contains(run.err(), "(the server is disconnected); Ctrl-C again to give up"));
  const auto t0 = std::chrono::steady_clock::now();
  run.signal(SIGINT);
  const int status = run.wait(30s);
  const auto took = std::chrono::steady_clock::now() - t0;
  INFO(run.out() << run.err());
  CHECK(status == 0);
  CHECK(took < 2s);
  // Each image never stored is counted once: dropped, and the backlog is 0 at the end.
  std::smatch m;
  const std::string out = run.out();
  REQUIRE(std::regex_search(out, m, std::regex(R"(nats \d+ acked, (\d+) dropped, backlog (\d+))")));
  CHECK(std::stoull(m[1]) > 0);
  CHECK(m[2] == "0");
}

#endif  // libnats
