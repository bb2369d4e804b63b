// `eitstream view` through the real binary: how it ends. SIGINT and SIGTERM stop it as they stop
// every long-running command (StopSignals): the summary, then exit status 0.
#include <doctest/doctest.h>

#include <csignal>
#include <string>

#include "cli_run.hpp"
#include "subprocess.hpp"

using eit::test::contains;
using eit::test::Subprocess;
using namespace std::chrono_literals;

TEST_CASE("SIGINT and SIGTERM end view with its summary and status 0") {
  for (const int sig : {SIGINT, SIGTERM}) {
    CAPTURE(sig);
    // A publisher nobody runs: the view waits for it, as it does for one that has not started.
    Subprocess view({EITSTREAM_BIN, "view", "tcp://127.0.0.1:9", "--http", "127.0.0.1:0"});
    REQUIRE(view.wait_for_stderr("live view: http://127.0.0.1:", 60s));
    view.signal(sig);
    CHECK(view.wait(30s) == 0);
    INFO(view.err());
    CHECK(contains(view.out(), "view: images sent 0"));
  }
}
