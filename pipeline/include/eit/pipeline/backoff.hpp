#pragma once
// Waiting without locks: spin briefly (the next frame is usually microseconds away), then yield,
// then sleep in growing steps up to a bound, so an idle pipeline costs no CPU and a busy one no
// syscalls. Used by lossless producers waiting for room and by consumers waiting for work.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace eit::pipeline {

class Backoff {
 public:
  explicit Backoff(std::chrono::microseconds max_sleep = std::chrono::microseconds(200))
      : max_sleep_us_(max_sleep.count()) {}

  void pause() noexcept {
    if (round_ < kSpinRounds) {
#if defined(__x86_64__) || defined(__i386__)
      _mm_pause();
#endif
    } else if (round_ < kSpinRounds + kYieldRounds) {
      std::this_thread::yield();
    } else {
      const int64_t us = std::min<int64_t>(int64_t{1} << std::min<uint32_t>(round_ - kSpinRounds - kYieldRounds, 20),
                                           max_sleep_us_);
      std::this_thread::sleep_for(std::chrono::microseconds(us));
    }
    ++round_;
  }
  void reset() noexcept { round_ = 0; }

 private:
  static constexpr uint32_t kSpinRounds = 256;
  static constexpr uint32_t kYieldRounds = 64;
  int64_t max_sleep_us_;
  uint32_t round_ = 0;
};

}  // namespace eit::pipeline
