#include "option_checks.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace eit::cli {

CLI::Validator within(double lo, double hi, bool lo_open, bool hi_open) {
  const std::string interval =
      fmt::format("{}{}, {}{}", lo_open ? "(" : "[", lo, hi, hi_open ? ")" : "]");
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        try {
          size_t used = 0;
          v = std::stod(text, &used);
          if (used != text.size()) return fmt::format("'{}' is not a number", text);
        } catch (const std::exception&) {
          return fmt::format("'{}' is not a number", text);
        }
        const bool ok = !std::isnan(v) && (lo_open ? v > lo : v >= lo) &&
                        (hi_open ? v < hi : v <= hi) && (std::isfinite(v) || std::isinf(hi));
        return ok ? std::string() : fmt::format("{} is outside {}", text, interval);
      },
      "in " + interval);
}

}  // namespace eit::cli
