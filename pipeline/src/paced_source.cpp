#include "eit/pipeline/paced_source.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/pipeline/clock.hpp"

namespace eit::pipeline {

PacedSource::PacedSource(Source& inner, PacingOptions options) : inner_(inner) {
  if (!(options.rate_hz >= 0) || !std::isfinite(options.rate_hz))
    throw std::invalid_argument(fmt::format(
        "pacing: rate {} frames/s, expected ≥ 0 (0: the source's own)", options.rate_hz));
  if (!(options.speed > 0) || !std::isfinite(options.speed))
    throw std::invalid_argument(
        fmt::format("pacing: speed {}, expected a factor > 0", options.speed));
  rate_hz_ = options.rate_hz > 0 ? options.rate_hz : inner.nominal_rate_hz() * options.speed;
  period_ns_ = rate_hz_ > 0 ? static_cast<int64_t>(std::llround(1e9 / rate_hz_)) : 0;
}

std::string PacedSource::describe() const {
  if (period_ns_ == 0) return inner_.describe();
  return fmt::format("{} paced at {:g} frames/s", inner_.describe(), rate_hz_);
}

// Sleeps until t_ns; false when stop() came first.
bool PacedSource::sleep_until(int64_t t_ns) noexcept {
  while (now_ns() < t_ns) {
    const uint32_t token = stop_bell_.arm();
    if (stopped_.load(std::memory_order_acquire)) {
      stop_bell_.disarm();
      return false;
    }
    stop_bell_.sleep(token, t_ns);
    stop_bell_.disarm();
  }
  return !stopped_.load(std::memory_order_acquire);
}

ReadStatus PacedSource::read(FrameSlot& slot, std::chrono::milliseconds timeout) {
  if (stopped_.load(std::memory_order_acquire)) return ReadStatus::kStopped;
  if (period_ns_ == 0) return inner_.read(slot, timeout);
  // Frame index_ is due at t0 + index_·period whatever happened before (open loop). Its time is
  // waited for before the inner source is read, so a frame not due within `timeout` is left
  // where it is (kTimeout) and the next call picks the schedule up again.
  const int64_t entered = now_ns();
  if (index_ == 0) t0_ns_ = entered;
  const int64_t due = t0_ns_ + static_cast<int64_t>(index_) * period_ns_;
  const int64_t deadline =
      entered + std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
  if (due > deadline) {
    if (!sleep_until(deadline)) return ReadStatus::kStopped;
    return ReadStatus::kTimeout;
  }
  if (!sleep_until(due)) return ReadStatus::kStopped;
  const ReadStatus status = inner_.read(slot, timeout);
  if (status != ReadStatus::kFrame) return status;
  ++index_;
  slot.stamp(Stage::kScheduled, due);
  slot.stamp(Stage::kReceived, now_ns());
  return ReadStatus::kFrame;
}

void PacedSource::stop() noexcept {
  stopped_.store(true, std::memory_order_release);
  stop_bell_.ring();
  inner_.stop();
}

}  // namespace eit::pipeline
