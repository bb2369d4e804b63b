// `run:` in the final summary gives the streaming time and frames/s without the wait at the stop
// (a lossless consumer, NATS, a recording finishing), and the wait on its own `stop:` line when it
// is not negligible. Before, the wait was in the time: a 1 s run at 50 frames/s whose stop
// waited 2 s for an absent consumer said `run: 3.0 s, 16.7 frames/s`.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <regex>
#include <string>
#include <thread>

#include "subprocess.hpp"

using eit::test::Subprocess;

TEST_CASE("run's time and frames per second leave out the stop's wait which is said apart") {
  // Lossless PUSH with no consumer: at the end of --duration the run waits for one (up to
  // 10 s); a signal 2 s into that wait gives it up.
  Subprocess run({EITSTREAM_BIN, "run", "--endpoint", "tcp://127.0.0.1:0", "--push", "--policy",
                  "lossless", "--fps", "50", "--duration", "1", "--backend", "cpu"});
  REQUIRE(run.wait_for_stderr("eitstream: stopping: waiting up to 10 s for the consumer",
                              std::chrono::seconds(30)));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  run.signal(SIGINT);
  const int code = run.wait(std::chrono::seconds(30));
  CAPTURE(run.out());
  CAPTURE(run.err());
  CHECK(code == 4);  // the frames never reached a consumer
  std::smatch m;
  REQUIRE(std::regex_search(run.out(), m,
                            std::regex(R"(\nrun: ([0-9.]+) s, ([0-9.]+) frames/s to the sinks)")));
  const double seconds = std::stod(m[1]), rate = std::stod(m[2]);
  CHECK(seconds > 0.8);
  CHECK(seconds < 1.6);  // the 1 s of --duration, not the 3 s with the wait
  CHECK(rate > 30);      // ~50, not ~17
  REQUIRE(std::regex_search(run.out(), m,
                            std::regex(R"(\nstop: waited ([0-9.]+) s for the sinks to finish)")));
  const double waited = std::stod(m[1]);
  CHECK(waited > 1.5);
  CHECK(waited < 5);
}
