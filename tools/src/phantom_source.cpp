#include "phantom_source.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "command_registry.hpp"

namespace eit::cli {
namespace {

double number(const std::string& spec, const std::string& key, const std::string& text) {
  double v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size())
    throw CommandError(fmt::format("--source '{}': {}='{}' is not a number", spec, key, text));
  return v;
}

// positions=4.5 would be cut to 4 without a word.
int whole_number(const std::string& spec, const std::string& key, const std::string& text) {
  const double v = number(spec, key, text);
  if (v != std::floor(v) || std::fabs(v) > 1e6)
    throw CommandError(
        fmt::format("--source '{}': {}={} is not a whole number; expected one from 4 to 1000000",
                    spec, key, text));
  return static_cast<int>(v);
}

}  // namespace

bool is_phantom_source(std::string_view source) noexcept {
  return source == "synthetic" || source.starts_with("phantom:");
}

std::optional<acquisition::BreathingOptions> parse_breathing_source(const std::string& source) {
  if (!source.starts_with("phantom:")) return std::nullopt;
  const auto q = source.find('?');
  const std::string kind = source.substr(8, q == std::string::npos ? std::string::npos : q - 8);
  if (kind != "breathing")
    throw CommandError(fmt::format("--source '{}': unknown phantom '{}' (expected {})", source,
                                   kind, kBreathingSourceHelp));
  acquisition::BreathingOptions b;
  if (q == std::string::npos) return b;
  size_t pos = q + 1;
  while (pos <= source.size()) {
    const auto amp = std::min(source.find('&', pos), source.size());
    const std::string item = source.substr(pos, amp - pos);
    pos = amp + 1;
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? std::string() : item.substr(eq + 1);
    if (key == "rate")
      b.breaths_per_min = number(source, key, value);
    else if (key == "tidal")
      b.conductivity_drop = number(source, key, value);
    else if (key == "delay")
      b.right_delay_s = number(source, key, value);
    else if (key == "lung")
      b.lung_radius = number(source, key, value);
    else if (key == "positions")
      b.positions = whole_number(source, key, value);
    else
      throw CommandError(fmt::format(
          "--source '{}': unknown key '{}' (expected rate, tidal, delay, lung or positions)",
          source, key));
  }
  return b;
}

std::unique_ptr<pipeline::Source> open_breathing_phantom(const acquisition::BreathingOptions& b,
                                                         double rate_hz, double snr_db,
                                                         const recon::Protocol& protocol,
                                                         const recon::Mesh& mesh, bool paced) {
  acquisition::PhantomOptions po;
  po.rate_hz = rate_hz;
  po.snr_db = snr_db;
  po = acquisition::breathing_source_options(b, po);
  if (!paced) po.rate_hz = 0;
  try {
    return std::make_unique<acquisition::SyntheticPhantomSource>(
        acquisition::make_breathing_table(mesh, protocol, b), po);
  } catch (const std::invalid_argument& e) {
    throw CommandError(fmt::format("--source phantom:breathing: {}", e.what()));
  }
}

}  // namespace eit::cli
