#pragma once
// PacedSource: replay speed as a decorator around any Source. Frame i is released at
// t0 + i / rate (open loop: a late frame does not push the schedule back), where t0 is when the
// first frame was read and rate is PacingOptions::rate_hz, or the inner source's nominal rate
// times `speed`. With neither (an unpaced inner source and no rate) frames pass straight through.
// Each released frame is stamped kScheduled = its due time and kReceived = its release time.
// read() waits for the next frame's due time first and only then reads the inner source, so it
// keeps Source's contract: a frame not due within `timeout` stays unread (kTimeout; the next call
// picks the schedule up), and the end of the inner source shows at the time of the frame after
// the last. A frame the inner source skips (a codec rejecting it) does not use up a time slot.
// This is the one pacing implementation: ReplaySource (acquisition/) paces through it too.
//
// Threading: read() from one thread (the source stage); stop() from any thread wakes a read()
// waiting for its due time at once (a futex doorbell, no polling). The inner source is borrowed
// and must outlive the decorator. read() never allocates.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "eit/pipeline/doorbell.hpp"
#include "eit/pipeline/source.hpp"

namespace eit::pipeline {

struct PacingOptions {
  double rate_hz = 0;  // frames per second; 0: the inner source's nominal rate × speed
  double speed = 1.0;  // replay speed factor applied to the nominal rate (2 = twice as fast)
};

class PacedSource final : public Source {
 public:
  // Throws std::invalid_argument for a negative rate or a speed ≤ 0.
  PacedSource(Source& inner, PacingOptions options);

  std::string describe() const override;
  size_t n_values() const noexcept override { return inner_.n_values(); }
  double nominal_rate_hz() const noexcept override { return rate_hz_; }
  // The inner source's own time base where it knows one; else the pace.
  double recorded_rate_hz() const noexcept override {
    const double inner = inner_.recorded_rate_hz();
    return inner > 0 ? inner : rate_hz_;
  }
  ReadStatus read(FrameSlot& slot, std::chrono::milliseconds timeout) override;
  void stop() noexcept override;
  SourceStats stats() const override { return inner_.stats(); }

 private:
  bool sleep_until(int64_t t_ns) noexcept;

  Source& inner_;
  double rate_hz_;
  int64_t period_ns_;  // 0: unpaced
  int64_t t0_ns_ = 0;
  uint64_t index_ = 0;
  std::atomic<bool> stopped_{false};
  Doorbell stop_bell_;
};

}  // namespace eit::pipeline
