#pragma once
// Replays from a time T (since=T) around a libnats 3.4.1 bug: it writes a consumer's
// opt_start_time with the nanoseconds as ".%ld" less trailing zeros but without leading zeros, so
// a T whose nanoseconds have fewer than nine digits reaches the server later than asked
// (12:00:00.045 goes out as 12:00:00.45) and what was stored in between is never delivered. The
// server is asked for T's whole second, which libnats writes exactly, and StartTimeGate drops
// what that delivers before T.
//
// Why the JetStream timestamp (the time the stream stored a message, from the message's
// metadata) and not our image header's time: it is the clock the server compares a start time
// with, so the gate lets through exactly what a start of T, written right, would have delivered.
//
// Threads: a gate belongs to the one thread reading its consumer. admits() allocates (libnats
// parses the message's metadata) only while the gate is closed: within T's first second.
#include <cstdint>

#include <nats/nats.h>

namespace eit::nats {

// T (> 0) floored to the whole second, at least 1 s: what a consumer is asked for (libnats writes
// no fraction for nanoseconds 0).
int64_t start_time_sent(int64_t since_ns) noexcept;

// Sets `config` to deliver from T's whole second (js_DeliverByStartTime, start_time_sent(T)).
void deliver_from_time(jsConsumerConfig& config, int64_t since_ns) noexcept;

// Drops the messages a consumer opened with deliver_from_time(T) delivers before T. The server
// delivers in stream order from the first message stored at or after its start, so once one
// stored at or after T came the gate stays open: a new gate for each consumer (re)opened.
class StartTimeGate {
 public:
  // since_ns <= 0: open from the start (no replay from a time).
  explicit StartTimeGate(int64_t since_ns = 0) noexcept
      : since_ns_(since_ns), open_(since_ns <= 0) {}

  // A message the stream stored at stored_ns: true when it is to be delivered.
  bool admits(int64_t stored_ns) noexcept {
    if (!open_ && stored_ns >= since_ns_) open_ = true;
    return open_;
  }
  // The same for a JetStream message; one whose metadata cannot be read is let through.
  bool admits(natsMsg* msg) noexcept;
  bool open() const noexcept { return open_; }

 private:
  int64_t since_ns_;
  bool open_;
};

}  // namespace eit::nats
