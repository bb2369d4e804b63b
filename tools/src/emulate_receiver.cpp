// What emulate's receiver needs to decode its frames (emulate_receiver.hpp).
#include "emulate_receiver.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "command_registry.hpp"
#include "run_nats.hpp"

namespace eit::cli {
namespace {

using acquisition::IngestSampleType;

double parsed(const std::string& text) {
  double v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

double peak_of(std::span<const float> values) {
  double peak = 0;
  for (float v : values)
    if (std::isfinite(v)) peak = std::max(peak, std::fabs(static_cast<double>(v)));
  return peak;
}

// Three significant digits, rounded up so that the peak still uses at most half the range.
std::string round_scale_up(double raw) {
  const double step = std::pow(10.0, std::floor(std::log10(raw)) - 2);
  return fmt::format("{:.3g}", std::ceil(raw / step) * step);
}

}  // namespace

std::optional<IntegerScale> choose_integer_scale(IngestSampleType type, double requested,
                                                 std::span<const float> first_frame) {
  const double limit = acquisition::ingest_integer_limit(type);
  if (limit == 0) {
    if (requested != 0)
      throw CommandError(
          fmt::format("--scale {}: only integer samples are scaled; expected "
                      "--sample-type i16 or i32 (this is {})",
                      requested, acquisition::to_string(type)));
    return std::nullopt;
  }
  IntegerScale s;
  s.first_peak = peak_of(first_frame);
  if (requested != 0) {
    if (!(requested > 0) || !std::isfinite(requested))
      throw CommandError(fmt::format("--scale {}: expected a finite number above 0", requested));
    s.text = fmt::format("{}", requested);  // the shortest text that reads back as `requested`
    s.value = requested;
    const size_t clipped = acquisition::ingest_integer_overflows(type, first_frame, requested);
    if (clipped > 0)
      throw CommandError(fmt::format(
          "--scale {}: {} values of the first frame (up to {:.6g}) would clip as {} (at most "
          "{:.0f} × {}); expected --scale of at least {:.3g}, or none to choose one",
          requested, clipped, s.first_peak, acquisition::to_string(type), limit, requested,
          s.first_peak / limit));
    return s;
  }
  s.chosen = true;
  const double raw = s.first_peak * 2 / limit;
  s.text = raw > 0 && std::isfinite(raw) ? round_scale_up(raw) : "1";
  s.value = parsed(s.text);
  return s;
}

std::string emulate_receiver_uri(const std::string& link_uri, const std::string& format,
                                 const std::optional<IntegerScale>& scale) {
  std::string uri = link_uri;
  const auto add = [&](std::string_view key, std::string_view value) {
    uri += fmt::format("{}{}={}", uri.find('?') == std::string::npos ? '?' : '&', key, value);
  };
  if (!is_nats_uri(link_uri)) add("format", format);
  if (scale) add("scale", scale->text);
  return uri;
}

}  // namespace eit::cli
