// Doorbell with several waiters on one bell (the CPU backend's helper threads share one): every
// ring after a waiter armed wakes it, whatever the other waiters do meanwhile. With a single
// armed flag, one waiter's disarm() hid another still asleep and the ring was lost (the waiter
// then slept until its deadline; here that counts as a miss).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/doorbell.hpp"

using namespace eit::pipeline;

TEST_CASE("one ring wakes every waiter of a shared doorbell, round after round") {
  constexpr int kWaiters = 4;
  constexpr uint64_t kRounds = 5000;
  constexpr int64_t kDeadlineNs = 2'000'000'000;  // a lost ring shows as a timed-out wait
  Doorbell bell;
  std::atomic<uint64_t> round{0};
  std::atomic<uint32_t> acked{0};
  std::atomic<uint32_t> misses{0};
  std::vector<std::thread> waiters;
  for (int w = 0; w < kWaiters; ++w) {
    waiters.emplace_back([&] {
      for (uint64_t r = 1; r <= kRounds; ++r) {
        const auto ready = [&] { return round.load(std::memory_order_acquire) >= r; };
        // kIdle: sleep at once, so every round goes through arm/sleep/disarm.
        if (!wait_until(bell, LatencyMode::kIdle, 0, now_ns() + kDeadlineNs, ready)) {
          misses.fetch_add(1);
          while (!ready()) std::this_thread::yield();
        }
        acked.fetch_add(1, std::memory_order_acq_rel);
      }
    });
  }
  for (uint64_t r = 1; r <= kRounds; ++r) {
    round.store(r, std::memory_order_release);
    bell.ring();
    while (acked.load(std::memory_order_acquire) < r * kWaiters) std::this_thread::yield();
  }
  for (auto& t : waiters) t.join();
  CHECK(misses.load() == 0);
  CHECK(acked.load() == kRounds * kWaiters);
}
