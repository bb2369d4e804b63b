#pragma once
// Source: where frames come from (synthetic phantom, file replay, TCP, UDP, serial). A source
// fills a FrameSlot taken from the pool with one frame of values in the model's measurement
// order, stamps Stage::kReceived (and kScheduled when it paces itself), sets seq and, when the
// device sends one, device_time_ns.
//
// Threading: one thread (the acquisition stage) calls read(); stop() may be called from any
// thread and makes a blocked read() return kStopped promptly. read() does not allocate; it may
// block up to `timeout` waiting for data.
#include <chrono>
#include <cstdint>
#include <string>

#include "eit/pipeline/frame.hpp"

namespace eit::pipeline {

enum class ReadStatus {
  kFrame,    // the slot holds a new frame
  kTimeout,  // no frame within the timeout; call again
  kEnd,      // the source is exhausted (end of a file without looping); no frame
  kStopped,  // stop() was called
};

// Running counters a source keeps; read by the stats/status thread (relaxed snapshot).
struct SourceStats {
  uint64_t frames = 0;         // frames delivered
  uint64_t bad_frames = 0;     // rejected by the codec (wrong length, unparsable) or cut short
  uint64_t bytes_skipped = 0;  // bytes discarded while resynchronising
  uint64_t seq_gaps = 0;  // frames missing by sequence number (lost upstream), not counted as bad
  uint64_t reordered = 0;      // frames that arrived out of order (dropped)
  uint64_t reconnects = 0;     // transport reconnections
  std::string last_error;      // most recent problem in words, for the status line
};

class Source {
 public:
  virtual ~Source() = default;
  // Human-readable description, e.g. "replay draeger_ID_SC_10_60.eit (Dräger .eit v51, 20 Hz)".
  virtual std::string describe() const = 0;
  // Values per frame after mapping to the model's order.
  virtual size_t n_values() const noexcept = 0;
  // The source's nominal frame rate in Hz, 0 when unknown or unpaced.
  virtual double nominal_rate_hz() const noexcept { return 0.0; }
  // The rate of the frames' own time base, 0 when unknown: what the device produced them at.
  // A replay at --speed 4 (or unpaced) delivers faster than this; recordings store this one and
  // breath timing uses it. Live sources: the nominal rate.
  virtual double recorded_rate_hz() const noexcept { return nominal_rate_hz(); }
  virtual ReadStatus read(FrameSlot& slot, std::chrono::milliseconds timeout) = 0;
  virtual void stop() noexcept = 0;
  virtual SourceStats stats() const = 0;
};

}  // namespace eit::pipeline
