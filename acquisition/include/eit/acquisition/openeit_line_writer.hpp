#pragma once
// Writes one frame as the OpenEIT firmware does: "magnitudes: ", then each value as
// "%8d.%04d," (rounded to 4 decimals), then "\r\n". The firmware only sends non-negative
// magnitudes; a negative value is written with a leading '-' so nothing is lost. Used by
// `eitstream emulate --format openeit`. No allocation, any thread.
#include <cstddef>
#include <span>

namespace eit::acquisition {

// Bytes a line of n values may need at most.
size_t openeit_line_capacity(size_t n_values) noexcept;

// Writes the line into `out` and returns its length, 0 when `out` is too small.
size_t format_openeit_line(std::span<const float> values, std::span<char> out) noexcept;

}  // namespace eit::acquisition
