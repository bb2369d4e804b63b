#pragma once
// all_finite(): whether n floats hold no NaN and no ±inf. On the per-frame path (measurements and
// images, every frame), so it is written to vectorise: a float is NaN or ±inf exactly when its
// exponent bits are all ones, i.e. when its bits with the sign cleared, read as an unsigned
// integer, are ≥ 0x7f800000. The maximum of those over the buffer is an integer max reduction
// with no branch per value. It scans the whole buffer (no early exit): non-finite frames are
// rare, and one branch per value cost more than the whole scan.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace eit::pipeline {

inline bool all_finite(const float* v, size_t n) noexcept {
  constexpr uint32_t kMagnitude = 0x7fffffffu;  // all bits but the sign
  constexpr uint32_t kInfBits = 0x7f800000u;    // +inf; larger magnitudes are NaNs
  uint32_t largest = 0;
  for (size_t i = 0; i < n; ++i)
    largest = std::max(largest, std::bit_cast<uint32_t>(v[i]) & kMagnitude);
  return largest < kInfBits;
}

}  // namespace eit::pipeline
