#include "eit/pipeline/doorbell.hpp"

#include <climits>
#include <ctime>
#include <thread>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace eit::pipeline {

// The futex word is the atomic's own storage (std::atomic<uint32_t> is lock-free and has the
// size and alignment of uint32_t on every platform we build for).
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
static_assert(std::atomic<uint32_t>::is_always_lock_free);

void Doorbell::sleep(uint32_t token, int64_t deadline_ns) noexcept {
  const int64_t left = deadline_ns - now_ns();
  if (left <= 0) return;
#if defined(__linux__)
  timespec rel{static_cast<time_t>(left / 1'000'000'000), static_cast<long>(left % 1'000'000'000)};
  // Returns at once when seq_ no longer equals token (a ring() came in between).
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&seq_), FUTEX_WAIT_PRIVATE, token, &rel, nullptr,
          0);
#else
  (void)token;
  std::this_thread::sleep_for(std::chrono::microseconds(std::min<int64_t>(left / 1000, 50)));
#endif
}

void Doorbell::wake() noexcept {
  seq_.fetch_add(1, std::memory_order_relaxed);
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&seq_), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
#endif
}

}  // namespace eit::pipeline
