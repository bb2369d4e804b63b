#pragma once
// Doorbell: how a stage thread sleeps until there is work, and wakes within microseconds when
// there is. Any number of threads wait on a bell and any number ring it; one ring wakes every
// armed waiter with one system call (the CPU backend's helper threads share one bell, so a batch
// costs one futex wake, not one per helper). Built on a futex (the
// mechanism behind C++20 std::atomic::wait/notify) because stages also need a deadline (sink
// ticks every 100 ms, the reconstructor's cache warming, stop flags), which std::atomic::wait
// lacks.
//
//   waiter:  token = bell.arm();  if (!work()) bell.sleep(token, deadline);  bell.disarm();
//   ringer:  make work visible (a release store, e.g. SpscQueue::try_push);  bell.ring();
//
// No lost wake-ups: arm() and ring() each put a sequentially consistent fence between their
// store and their load, so either the ringer sees the waiter armed (and wakes it), or the
// waiter's re-check after arm() sees the work. `armed_` counts the armed waiters, so one waiter's
// disarm() cannot hide another that is still asleep. ring() costs a fence and a load when nobody
// sleeps, and one futex-wake system call when somebody does. Neither call allocates or locks.
#include <atomic>
#include <cstdint>

namespace eit::pipeline {

// How stage threads wait for work (PipelineOptions::latency_mode, `--latency-mode`).
enum class LatencyMode {
  kSpin,      // busy-poll, never sleep: lowest latency, one core per stage (dedicated hosts)
  kBalanced,  // poll briefly after work, then sleep on the doorbell: ~0 CPU when idle
  kIdle,      // sleep on the doorbell at once: least CPU, a futex wake per frame per stage
};

class Doorbell {
 public:
  // Waiter: announce the intent to sleep; returns the token to pass to sleep(). Re-check for work
  // after this call and before sleep().
  uint32_t arm() noexcept {
    armed_.fetch_add(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return seq_.load(std::memory_order_relaxed);
  }
  // Waiter: sleeps until ring() after arm(), or until deadline_ns (clock.hpp now_ns()), or a
  // spurious wake-up. The caller re-checks its condition either way.
  void sleep(uint32_t token, int64_t deadline_ns) noexcept;
  // Waiter: after sleep(), once per arm().
  void disarm() noexcept { armed_.fetch_sub(1, std::memory_order_relaxed); }

  // Any thread: wake every armed waiter (one system call, none when nobody is armed).
  void ring() noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (armed_.load(std::memory_order_relaxed)) wake();
  }

 private:
  void wake() noexcept;
  std::atomic<uint32_t> seq_{0};
  std::atomic<uint32_t> armed_{0};  // waiters between arm() and disarm()
};

// How a waiting thread polls: kPause spins on the CPU; kYield offers the CPU to any thread
// waiting for it between polls (a sink lane: its sink's helper threads, such as ZeroMQ's I/O
// thread, may share its CPU and must run as soon as it has handed them a message).
enum class PollStyle { kPause, kYield };

// Waits until ready() is true or deadline_ns passes, in the given mode: kSpin polls only;
// kBalanced polls for spin_ns first, then sleeps on the bell; kIdle sleeps at once. Returns
// ready()'s last value. ready() must be cheap and safe to call repeatedly.
template <typename Ready>
bool wait_until(Doorbell& bell, LatencyMode mode, int64_t spin_ns, int64_t deadline_ns,
                Ready&& ready, PollStyle style = PollStyle::kPause) noexcept;

}  // namespace eit::pipeline

#include "eit/pipeline/doorbell_wait.hpp"
