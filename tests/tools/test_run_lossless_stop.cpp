// `eitstream run --push --policy lossless` asked to stop while no consumer takes its frames: one
// Ctrl-C starts a bounded wait for the consumer, said on stderr, then the run ends with exit
// status 4 and counts that agree (before, it waited for a consumer for ever, silently).
#include <doctest/doctest.h>

#include <csignal>
#include <string>

#include "subprocess.hpp"

using eit::test::Subprocess;

TEST_CASE("a lossless run with no consumer stops within its drain wait after one Ctrl-C") {
  Subprocess run({EITSTREAM_BIN, "run", "--endpoint", "tcp://127.0.0.1:0", "--push", "--policy",
                  "lossless", "--fps", "50"});
  REQUIRE(run.wait_for_stderr("latency p50", std::chrono::seconds(20)));  // the first status line
  run.signal(SIGINT);
  CHECK(run.wait_for_stderr("eitstream: stopping: waiting up to 10 s for the consumer to take",
                            std::chrono::seconds(5)));
  const int code = run.wait(std::chrono::seconds(40));
  CAPTURE(run.out());
  CAPTURE(run.err());
  CHECK(code == 4);
  // "at least": the run cannot see what a consumer that went away had received but not read.
  CHECK(run.err().find("at least ") != std::string::npos);
  CHECK(run.err().find("frames and the series-end did not reach the consumer") !=
        std::string::npos);
}

// The source ends (--frames) with no consumer taking frames: the old run waited for one for ever,
// silently. It now gives up once the consumer has taken none for the drain wait (10 s), says so,
// and exits 4 with the frames counted as dropped. (300 frames fit in the queues, so the source
// ends; a longer run stalls the source, and the run says it waits, below.)
TEST_CASE("a lossless run with no consumer gives up after its source ends") {
  Subprocess run({EITSTREAM_BIN, "run", "--endpoint", "tcp://127.0.0.1:0", "--push", "--policy",
                  "lossless", "--fps", "0", "--frames", "300"});
  CHECK(run.wait_for_stderr("the source ended and the consumer took no frame for 10 s",
                            std::chrono::seconds(40)));
  const int code = run.wait(std::chrono::seconds(40));
  CAPTURE(run.out());
  CAPTURE(run.err());
  CHECK(code == 4);
  CHECK(run.out().find("frames: in 300,") != std::string::npos);
  // "at least": the run cannot see what a consumer that went away had received but not read.
  CHECK(run.err().find("at least ") != std::string::npos);
  CHECK(run.err().find("frames and the series-end did not reach the consumer") !=
        std::string::npos);
}

TEST_CASE("a lossless run stalled by its consumer says it waits and stops on Ctrl-C") {
  Subprocess run({EITSTREAM_BIN, "run", "--endpoint", "tcp://127.0.0.1:0", "--push", "--policy",
                  "lossless", "--fps", "0", "--frames", "100000"});
  CHECK(run.wait_for_stderr("the consumer took no frame for 10 s", std::chrono::seconds(40)));
  CHECK(run.err().find("the run waits for it to come back") != std::string::npos);
  run.signal(SIGINT);
  const int code = run.wait(std::chrono::seconds(40));
  CAPTURE(run.err());
  CHECK(code == 4);
}
