// The source watchdog of `eitstream run` (tools/src/source_watchdog.hpp) on made-up counters and
// clock readings: when "only rejected frames for --source-timeout" starts, and when it is not
// the case. No process, no socket, no clock: each check() is given its time.
#include <doctest/doctest.h>

#include "../../tools/src/source_watchdog.hpp"

using eit::cli::SourceWatchdog;

namespace {

constexpr int64_t kS = 1'000'000'000;

eit::pipeline::SourceStats rejected(uint64_t bad_frames) {
  eit::pipeline::SourceStats s;
  s.bad_frames = bad_frames;
  return s;
}

}  // namespace

TEST_CASE("watchdog: an outage longer than the timeout, then one bad frame, is not a failure") {
  // 100 valid frames, then 8 s without a byte (the device rebooting), then one damaged frame on
  // reconnecting and valid frames after it. The old watchdog measured from the last valid frame
  // and ended the run (exit 5) on that damaged frame.
  SourceWatchdog w("tcp://127.0.0.1:9", 3.0, 0);
  CHECK_FALSE(w.check(rejected(0), 100, 1 * kS));
  for (int64_t t = 2; t <= 9; ++t) CHECK_FALSE(w.check(rejected(0), 100, t * kS));
  CHECK_FALSE(w.check(rejected(1), 100, 9 * kS + kS / 10));
  CHECK_FALSE(w.check(rejected(1), 100, 9 * kS + 2 * kS / 10));
  CHECK_FALSE(w.check(rejected(1), 101, 9 * kS + 3 * kS / 10));
}

TEST_CASE("watchdog: only rejected frames for the timeout, counted from the first, end the run") {
  SourceWatchdog w("tcp://127.0.0.1:9", 3.0, 0);
  CHECK_FALSE(w.check(rejected(0), 100, 1 * kS));
  CHECK_FALSE(w.check(rejected(0), 100, 20 * kS));  // silence is not a failure
  CHECK_FALSE(w.check(rejected(4), 100, 21 * kS));  // the rejected frames begin
  CHECK_FALSE(w.check(rejected(90), 100, 23 * kS));
  const auto why = w.check(rejected(150), 100, 24 * kS);
  REQUIRE(why);
  CHECK(*why ==
        "only rejected frames from tcp://127.0.0.1:9 for 3 s after 100 valid ones (150 "
        "frames rejected)");
}

TEST_CASE("watchdog: a valid frame among the rejected ones starts the count again") {
  SourceWatchdog w("tcp://127.0.0.1:9", 3.0, 0);
  CHECK_FALSE(w.check(rejected(0), 10, 1 * kS));
  CHECK_FALSE(w.check(rejected(5), 10, 2 * kS));
  CHECK_FALSE(w.check(rejected(6), 11, 4 * kS));
  CHECK_FALSE(w.check(rejected(7), 11, 5 * kS));
  CHECK_FALSE(w.check(rejected(9), 11, 7 * kS + kS / 2));
  CHECK(w.check(rejected(9), 11, 8 * kS));
}

TEST_CASE("watchdog: frames refused for their seq count as rejected ones, and are named") {
  // A device whose seq never advances: its first frame is taken, every later one is refused.
  SourceWatchdog w("tcp://127.0.0.1:9", 2.0, 0);
  eit::pipeline::SourceStats s;
  CHECK_FALSE(w.check(s, 1, kS / 10));
  s.reordered = 25;
  CHECK_FALSE(w.check(s, 1, kS));
  s.reordered = 100;
  const auto why = w.check(s, 1, 3 * kS);
  REQUIRE(why);
  CHECK(*why ==
        "only rejected frames from tcp://127.0.0.1:9 for 2 s after 1 valid ones (100 frames "
        "dropped by seq (repeated or behind))");
}
