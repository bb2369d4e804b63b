// The values of a live source URI's options (live_source_settings.hpp).
#include "live_source_settings.hpp"

#include <charconv>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

namespace eit::acquisition::detail {
namespace {

// The number in option `key` (fallback when absent); throws naming the whole URI, the option,
// the value and what was expected.
template <typename T>
T number_option(const LiveUri& uri, std::string_view key, T fallback, std::string_view expected) {
  const auto it = uri.query.find(key);
  if (it == uri.query.end()) return fallback;
  T value{};
  const auto& s = it->second;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) {
    throw std::invalid_argument(fmt::format(
        "source '{}': option {}='{}' is not a number; expected {}", uri.text, key, s, expected));
  }
  return value;
}

[[noreturn]] void out_of_range(const LiveUri& uri, std::string_view key, double value,
                               std::string_view expected) {
  throw std::invalid_argument(fmt::format("source '{}': {}={} is out of range; expected {}",
                                          uri.text, key, value, expected));
}

std::string text_option(const LiveUri& uri, std::string_view key, std::string fallback) {
  const auto it = uri.query.find(key);
  return it == uri.query.end() ? fallback : it->second;
}

// A text option that takes one of a few words, each with one spelling (loop=true is refused as
// complex=abs is: one name per value, as documented).
std::string word_option(const LiveUri& uri, std::string_view key, std::string fallback,
                        std::initializer_list<std::string_view> words, std::string_view expected) {
  std::string value = text_option(uri, key, std::move(fallback));
  for (const std::string_view w : words)
    if (value == w) return value;
  throw std::invalid_argument(
      fmt::format("source '{}': {}='{}'; expected {}", uri.text, key, value, expected));
}

// complex=: the part of each complex64 sample a live frame keeps (fallback when absent). Not
// interleaved: an ingest frame has one slot per measurement, and the (re, im) pairs are for
// recordings (--complex interleaved).
ComplexPart complex_option(const LiveUri& uri, ComplexPart fallback) {
  const auto it = uri.query.find("complex");
  if (it == uri.query.end()) return fallback;
  std::optional<ComplexPart> part;
  try {
    part = parse_complex_part(it->second);
  } catch (const std::invalid_argument&) {
  }
  if (part && *part != ComplexPart::kInterleaved) return *part;
  throw std::invalid_argument(fmt::format(
      "source '{}': complex='{}'; expected real, imag or magnitude{}", uri.text, it->second,
      part ? " (interleaved (re, im) pairs are for recordings: --complex interleaved)" : ""));
}

// complex= and scale= convert ingest samples (complex64, i16/i32); an OpenEIT line is text of
// real magnitudes, so either would be silently ignored.
void refuse_ingest_only_options(const LiveUri& uri, bool format_given) {
  for (const std::string_view key : {"complex", "scale"}) {
    const auto it = uri.query.find(key);
    if (it == uri.query.end()) continue;
    throw std::invalid_argument(fmt::format(
        "source '{}': {}={} has no effect with format=openeit{}: OpenEIT lines carry real "
        "magnitudes as text, and {}= converts the ingest framing's {} samples; expected "
        "format=ingest, or no {}=",
        uri.text, key, it->second, format_given ? "" : " (the default for serial://)", key,
        key == "complex" ? "complex64" : "integer (i16, i32)", key));
  }
}

}  // namespace

LiveSourceSettings read_live_source_settings(const LiveUri& uri, const LiveSourceOptions& options) {
  LiveSourceSettings s;
  const bool format_given = uri.query.contains("format");
  s.format = text_option(uri, "format", uri.scheme == "serial" ? "openeit" : "ingest");
  if (s.format != "ingest" && s.format != "openeit") {
    throw std::invalid_argument(
        fmt::format("source '{}': format='{}'; expected ingest or openeit", uri.text, s.format));
  }
  s.ingest = options.ingest;
  s.ingest.complex_part = complex_option(uri, s.ingest.complex_part);
  constexpr std::string_view kScale = "a finite number other than 0";
  s.ingest.integer_scale = number_option<double>(uri, "scale", s.ingest.integer_scale, kScale);
  if (!std::isfinite(s.ingest.integer_scale) || s.ingest.integer_scale == 0)
    out_of_range(uri, "scale", s.ingest.integer_scale, kScale);
  if (s.format == "openeit") refuse_ingest_only_options(uri, format_given);

  constexpr std::string_view kRate = "frames per second, above 0 up to 1e6";
  s.nominal_rate_hz = options.nominal_rate_hz;
  if (uri.query.contains("rate")) {
    s.nominal_rate_hz = number_option<double>(uri, "rate", 0.0, kRate);
    if (!(s.nominal_rate_hz > 0 && s.nominal_rate_hz <= 1e6))
      out_of_range(uri, "rate", s.nominal_rate_hz, kRate);
  }

  constexpr std::string_view kIdle = "seconds, 0 (never) to 3600";
  const double idle_s = number_option<double>(uri, "idle", -1.0, kIdle);  // < 0: the default
  if (uri.query.contains("idle") && !(idle_s >= 0 && idle_s <= 3600))
    out_of_range(uri, "idle", idle_s, kIdle);
  s.liveness.idle = idle_s < 0 ? default_idle_timeout(s.nominal_rate_hz)
                               : std::chrono::milliseconds(static_cast<int64_t>(idle_s * 1000));
  s.liveness.keepalive = word_option(uri, "keepalive", "1", {"0", "1"}, "0 or 1") == "1";

  s.reconnect = options.reconnect;
  const double connect_s = number_option<double>(
      uri, "connect_timeout", static_cast<double>(s.reconnect.connect_timeout.count()) / 1000,
      "seconds, 0.001 to 3600");
  if (!(connect_s >= 0.001 && connect_s <= 3600)) {
    throw std::invalid_argument(fmt::format(
        "source '{}': connect_timeout={} s; expected 0.001 to 3600", uri.text, connect_s));
  }
  s.reconnect.connect_timeout = std::chrono::milliseconds(std::llround(connect_s * 1000));
  return s;
}

SerialOptions read_serial_settings(const LiveUri& uri, const ReconnectPolicy& reconnect) {
  SerialOptions s;
  s.path = uri.path;
  constexpr std::string_view kBaud = "a baud rate above 0, e.g. 115200";
  s.baud = number_option<unsigned>(uri, "baud", 115200, kBaud);
  if (s.baud == 0) out_of_range(uri, "baud", s.baud, kBaud);
  s.data_bits = number_option<unsigned>(uri, "bits", 8, "5..8");
  if (s.data_bits < 5 || s.data_bits > 8) out_of_range(uri, "bits", s.data_bits, "5..8");
  s.stop_bits = number_option<unsigned>(uri, "stop", 1, "1 or 2");
  if (s.stop_bits != 1 && s.stop_bits != 2) out_of_range(uri, "stop", s.stop_bits, "1 or 2");
  s.parity = word_option(uri, "parity", "n", {"n", "e", "o"}, "n, e or o")[0];
  s.hardware_flow =
      word_option(uri, "flow", "none", {"none", "rtscts"}, "none or rtscts") == "rtscts";
  s.reconnect = reconnect;
  return s;
}

bool read_loop_setting(const LiveUri& uri) {
  return word_option(uri, "loop", "0", {"0", "1"}, "0 or 1") == "1";
}

void check_live_source_settings(const LiveUri& uri) {
  const LiveSourceSettings s = read_live_source_settings(uri, {});
  if (uri.scheme == "serial") read_serial_settings(uri, s.reconnect);
  if (uri.scheme == "file") read_loop_setting(uri);
}

}  // namespace eit::acquisition::detail
