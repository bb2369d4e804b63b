#pragma once
// ImagePacer: how many images one page may be sent now, at most `rate_hz` per second on average
// with bursts of up to kBurst (a token bucket). A display shows at most its refresh rate, so a
// page asks for about twice that (the "pace" message, docs/protocol.md): at 1,000 frames/s the
// server then sends each page the newest image every few milliseconds instead of every image,
// which keeps every drawn frame young while the browser handles ~8× fewer messages; at 50
// frames/s it never holds an image back, and the burst lets a server thread that the machine
// delayed still deliver the frames of the delay.
//
// Pure arithmetic on the caller's clock (ns); no allocation, no lock. Threads: one (the server
// thread owns each session's pacer).
#include <cstddef>
#include <cstdint>

namespace eit::view {

class ImagePacer {
 public:
  static constexpr double kBurst = 4;
  static constexpr double kMaxRateHz = 10'000;
  static constexpr double kMinRateHz = 0.01;  // an image every 100 s

  // 0 (or less): not paced. Rates are clamped to [kMinRateHz, kMaxRateHz]. A new rate starts
  // with a full bucket.
  void set_rate(double rate_hz, int64_t now_ns) noexcept;
  bool paced() const noexcept { return rate_hz_ > 0; }
  double rate_hz() const noexcept { return rate_hz_; }

  // How many images may go now (whole tokens); unbounded (SIZE_MAX) when not paced.
  size_t allowed(int64_t now_ns) noexcept;
  // One image went out (call after allowed() returned ≥ 1).
  void spend() noexcept;
  // When allowed() will next be ≥ 1: now_ns itself when it already is.
  int64_t due_ns(int64_t now_ns) noexcept;

 private:
  void refill(int64_t now_ns) noexcept;
  double rate_hz_ = 0;
  double tokens_ = 0;
  int64_t last_ns_ = 0;
};

}  // namespace eit::view
