// PollStyle::kYield (doorbell.hpp): a thread that spins for work in kYield style gives its CPU to
// any thread waiting for that CPU, such as ZeroMQ's I/O thread placed beside a sink lane. Two
// threads pinned to one CPU play ping-pong, each spinning for the other's move: yielding, each
// wait ends after a few polls; pausing (the control), a waiter polls until the scheduler preempts
// it, thousands of polls per move. Counting polls, not time, keeps the test free of timing.
#include <doctest/doctest.h>

#include <sched.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/doorbell.hpp"
#include "eit/pipeline/thread_pin.hpp"

using namespace eit::pipeline;

namespace {

struct Game {
  uint64_t polls = 0;     // ready() calls of both players
  uint32_t timeouts = 0;  // waits that ran into their deadline
  bool pinned = true;
};

// Players 0 and 1 move in turn, `rounds` times each, both pinned to `cpu`.
Game play(int cpu, int rounds, PollStyle style) {
  constexpr int64_t kDeadlineNs = 5'000'000'000;
  std::atomic<int> ball{0};
  std::atomic<uint64_t> polls{0};
  std::atomic<uint32_t> timeouts{0};
  std::atomic<bool> pinned{true};
  Doorbell bell;  // never rung: kSpin does not sleep
  auto player = [&](int parity) {
    if (pin_this_thread(cpu) != 0) pinned = false;
    for (int r = 0; r < rounds; ++r) {
      const int turn = 2 * r + parity;
      const auto my_turn = [&] {
        polls.fetch_add(1, std::memory_order_relaxed);
        return ball.load(std::memory_order_acquire) == turn;
      };
      if (!wait_until(bell, LatencyMode::kSpin, 0, now_ns() + kDeadlineNs, my_turn, style))
        timeouts.fetch_add(1);
      ball.store(turn + 1, std::memory_order_release);
    }
  };
  std::thread a(player, 0), b(player, 1);
  a.join();
  b.join();
  return {polls.load(), timeouts.load(), pinned.load()};
}

}  // namespace

TEST_CASE("a spinning waiter that yields hands its CPU to the thread beside it at once") {
  const int cpu = sched_getcpu();
  REQUIRE(cpu >= 0);
  constexpr int kRounds = 200;
  const Game yielding = play(cpu, kRounds, PollStyle::kYield);
  if (!yielding.pinned) {
    MESSAGE("skipped: the threads could not be pinned to CPU ", cpu);
    return;
  }
  CHECK(yielding.timeouts == 0);
  const double per_move = static_cast<double>(yielding.polls) / (2.0 * kRounds);
  MESSAGE("yielding: ", per_move, " polls per move");
  CHECK(per_move < 50);

  // Control: pausing instead of yielding, a move waits for the scheduler's preemption.
  constexpr int kControlRounds = 5;
  const Game pausing = play(cpu, kControlRounds, PollStyle::kPause);
  CHECK(pausing.timeouts == 0);
  const double pause_per_move = static_cast<double>(pausing.polls) / (2.0 * kControlRounds);
  MESSAGE("pausing: ", pause_per_move, " polls per move");
  CHECK(pause_per_move > 10 * per_move);
}
