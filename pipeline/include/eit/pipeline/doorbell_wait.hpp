#pragma once
// wait_until(): the waiting loop shared by every stage (declared in doorbell.hpp).
#include <sched.h>

#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/doorbell.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace eit::pipeline {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

template <typename Ready>
bool wait_until(Doorbell& bell, LatencyMode mode, int64_t spin_ns, int64_t deadline_ns,
                Ready&& ready, PollStyle style) noexcept {
  if (ready()) return true;
  int64_t now = now_ns();
  const int64_t spin_end = mode == LatencyMode::kSpin       ? deadline_ns
                           : mode == LatencyMode::kBalanced ? now + spin_ns
                                                            : now;
  while (now < spin_end && now < deadline_ns) {
    if (style == PollStyle::kYield)
      sched_yield();  // returns at once when no other thread waits for this CPU
    else
      for (int i = 0; i < 16; ++i) cpu_relax();
    if (ready()) return true;
    now = now_ns();
  }
  while (now < deadline_ns) {
    const uint32_t token = bell.arm();
    if (ready()) {
      bell.disarm();
      return true;
    }
    bell.sleep(token, deadline_ns);
    bell.disarm();
    if (ready()) return true;
    now = now_ns();
  }
  return ready();
}

}  // namespace eit::pipeline
