// Headers of raw-frame messages (see raw_frame_headers.hpp).
#include "raw_frame_headers.hpp"

#include <charconv>
#include <cmath>
#include <string_view>

#include "eit/nats/nats_frames.hpp"

namespace eit::nats {
namespace {

// A header's value as a positive finite number; 0 when absent (nullptr) or anything else.
double positive_number(const char* value) noexcept {
  if (!value) return 0;
  const std::string_view v(value);
  double x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  return ec == std::errc{} && end == v.data() + v.size() && std::isfinite(x) && x > 0 ? x : 0;
}

}  // namespace

double frame_rate_from_header(const char* value) noexcept { return positive_number(value); }

const char* header_of(natsMsg* msg, const char* name) noexcept {
  const char* value = nullptr;
  return natsMsgHeader_Get(msg, name, &value) == NATS_OK ? value : nullptr;
}

double stated_rate_hz(natsMsg* msg) noexcept {
  return positive_number(header_of(msg, kRateHeader));
}

double stated_integer_scale(natsMsg* msg, double otherwise) noexcept {
  const double scale = positive_number(header_of(msg, kScaleHeader));
  return scale > 0 ? scale : otherwise;
}

}  // namespace eit::nats
