#pragma once
// ArrivalWindow: predicts when the next frame of a paced stream arrives, so that a thread which
// would sleep until woken can poll just around that moment instead (a futex wake-up costs 10-50
// µs on a loaded machine; polling the 140 µs window at 50 frames/s costs 0.7 % of a core).
//
// note(t): a frame arrived at t — a stamp of the producer's (enqueued, published), not the
// waiter's own wake-up time, which is late by a varying amount when it slept through the frame.
// next(): [from, to) from kLeadNs before the next expected arrival (the last one plus the mean
// gap) to kLagNs after it. Empty until two arrivals were seen, and while frames come less than
// kMinPeriodNs apart (the window would cost more than 5 % of a core, and a busy stream keeps its
// consumer awake anyway). A gap of more than 4 mean gaps (a pause, lost frames) restarts the
// prediction from that frame without disturbing the mean. One thread; no allocation.
#include <cstdint>

namespace eit::pipeline {

class ArrivalWindow {
 public:
  // The lead covers a late timed wake-up of the waiter (20-40 µs on a loaded 2-core machine)
  // and the producer's jitter; the lag a producer that is late itself.
  static constexpr int64_t kLeadNs = 80'000;
  static constexpr int64_t kLagNs = 60'000;
  static constexpr int64_t kMinPeriodNs = 20 * (kLeadNs + kLagNs);

  struct Span {
    int64_t from = 0, to = 0;
    bool empty() const noexcept { return from == to; }
    bool contains(int64_t t) const noexcept { return t >= from && t < to; }
  };

  void note(int64_t t_ns) noexcept {
    if (t_ns <= 0) return;
    if (last_ > 0 && t_ns > last_) {
      const int64_t gap = t_ns - last_;
      if (period_ == 0)
        period_ = gap;
      else if (gap <= 4 * period_)
        period_ = (7 * period_ + gap) / 8;
    }
    last_ = t_ns;
  }

  Span next() const noexcept {
    if (last_ == 0 || period_ < kMinPeriodNs) return {};
    const int64_t due = last_ + period_;
    return {due - kLeadNs, due + kLagNs};
  }

  int64_t period_ns() const noexcept { return period_; }

 private:
  int64_t last_ = 0, period_ = 0;
};

}  // namespace eit::pipeline
