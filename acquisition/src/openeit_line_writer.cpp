// OpenEIT firmware line format (multiplex_adg732() prints "%8d.%04d," per value).
#include "eit/acquisition/openeit_line_writer.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

namespace eit::acquisition {
namespace {

constexpr char kPrefix[] = "magnitudes: ";
constexpr size_t kPrefixLen = sizeof(kPrefix) - 1;
constexpr size_t kMaxValueLen = 1 + 20 + 1 + 4 + 1;  // sign, int64 digits, '.', 4 digits, ','

}  // namespace

size_t openeit_line_capacity(size_t n_values) noexcept {
  return kPrefixLen + n_values * kMaxValueLen + 2;
}

size_t format_openeit_line(std::span<const float> values, std::span<char> out) noexcept {
  if (out.size() < openeit_line_capacity(values.size())) return 0;
  char* p = out.data();
  std::memcpy(p, kPrefix, kPrefixLen);
  p += kPrefixLen;
  for (float v : values) {
    const double x = std::isfinite(v) ? static_cast<double>(v) : 0.0;
    const double scaled = std::nearbyint(std::fabs(x) * 1e4);
    const int64_t fixed =
        scaled < 9e18 ? static_cast<int64_t>(scaled) : int64_t{9'000'000'000'000'000'000};
    const int64_t whole = fixed / 10000, frac = fixed % 10000;
    if (x < 0 && fixed != 0) {
      p = fmt::format_to(p, "-{}.{:04d},", whole, frac);
    } else {
      p = fmt::format_to(p, "{:8d}.{:04d},", whole, frac);
    }
  }
  *p++ = '\r';
  *p++ = '\n';
  return static_cast<size_t>(p - out.data());
}

}  // namespace eit::acquisition
