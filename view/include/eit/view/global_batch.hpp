#pragma once
// GlobalBatch: turns the indices stage's binary per-frame messages (`eit/<stream>/global`: the
// 40-byte "EIXG" header and float64 region sums, docs/protocol.md "Indices") into the page's JSON
// `global` message. Points are collected and sent in batches (every `interval_ms`, or when
// `max_points` are waiting), so a 1,000 frames/s stream costs the page 25 text messages a second:
//   {"type":"global","stream":S,"seq":[…],"frame":[…],"value":[…],"t_wall_ms":[…]}
// `value` is the global impedance (the first region sum); `t_wall_ms` is the acquisition time
// turned into wall-clock time with this host's clocks (the page prefers the acquisition time of
// the image with the same seq, which the image header carries host-independently).
//
// Threads: one thread (the feed's receiving thread). Allocates while collecting (not on a
// pipeline path: the view process's own thread).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace eit::view {

struct GlobalPoint {
  uint64_t seq = 0;
  uint64_t frame = 0;
  int64_t t_acquired_ns = 0;  // CLOCK_MONOTONIC of the publishing host
  double value = 0;           // global impedance (first region sum)
};

// Decodes one `global` message body; nullopt when it is not a well-formed version-1 message.
std::optional<GlobalPoint> decode_global(std::span<const std::byte> body) noexcept;

class GlobalBatch {
 public:
  explicit GlobalBatch(int interval_ms = 40, size_t max_points = 256)
      : interval_ns_(int64_t{interval_ms} * 1'000'000), max_points_(max_points) {}

  void add(const GlobalPoint& p, int64_t now_ns);
  bool empty() const noexcept { return points_.empty(); }
  // True when the batch should be sent now (old enough, or full).
  bool due(int64_t now_ns) const noexcept;
  // The JSON message of the waiting points (then empty). `wall_minus_mono_ns` converts the
  // monotonic acquisition times to wall-clock times.
  std::string take_json(const std::string& stream, int64_t wall_minus_mono_ns);

 private:
  int64_t interval_ns_;
  size_t max_points_;
  int64_t first_ns_ = 0;
  std::vector<GlobalPoint> points_;
};

}  // namespace eit::view
