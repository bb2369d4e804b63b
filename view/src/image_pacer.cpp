#include "eit/view/image_pacer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace eit::view {

void ImagePacer::set_rate(double rate_hz, int64_t now_ns) noexcept {
  // Below kMinRateHz the wait for a token would overflow the clock's nanoseconds.
  rate_hz_ =
      std::isfinite(rate_hz) && rate_hz > 0 ? std::clamp(rate_hz, kMinRateHz, kMaxRateHz) : 0;
  tokens_ = kBurst;
  last_ns_ = now_ns;
}

void ImagePacer::refill(int64_t now_ns) noexcept {
  if (now_ns <= last_ns_) return;  // a clock that did not advance adds nothing
  tokens_ = std::min(kBurst, tokens_ + static_cast<double>(now_ns - last_ns_) * 1e-9 * rate_hz_);
  last_ns_ = now_ns;
}

size_t ImagePacer::allowed(int64_t now_ns) noexcept {
  if (!paced()) return SIZE_MAX;
  refill(now_ns);
  return static_cast<size_t>(tokens_);
}

void ImagePacer::spend() noexcept {
  if (paced()) tokens_ = std::max(0.0, tokens_ - 1);
}

int64_t ImagePacer::due_ns(int64_t now_ns) noexcept {
  if (!paced()) return now_ns;
  refill(now_ns);
  if (tokens_ >= 1) return now_ns;
  return now_ns + static_cast<int64_t>(std::ceil((1 - tokens_) / rate_hz_ * 1e9));
}

}  // namespace eit::view
