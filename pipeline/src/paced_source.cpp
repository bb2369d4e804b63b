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

ReadStatus PacedSource::read(FrameSlot& slot, std::chrono::milliseconds timeout) {
  if (stopped_.load(std::memory_order_acquire)) return ReadStatus::kStopped;
  const ReadStatus status = inner_.read(slot, timeout);
  if (status != ReadStatus::kFrame || period_ns_ == 0) return status;
  if (index_ == 0) t0_ns_ = now_ns();
  const int64_t due = t0_ns_ + static_cast<int64_t>(index_) * period_ns_;
  ++index_;
  // The frame is already read: wait for its due time however long that is (only stop() cuts
  // it short), so the schedule never slips.
  while (now_ns() < due) {
    const uint32_t token = stop_bell_.arm();
    if (stopped_.load(std::memory_order_acquire)) {
      stop_bell_.disarm();
      return ReadStatus::kStopped;
    }
    stop_bell_.sleep(token, due);
    stop_bell_.disarm();
  }
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
