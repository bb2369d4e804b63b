#include "option_checks.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

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

namespace {

CLI::Validator decimal(bool allow_sign) {
  return CLI::Validator(
      [allow_sign](std::string& text) -> std::string {
        std::string_view digits = text;
        if (allow_sign && digits.starts_with('-')) digits.remove_prefix(1);
        const bool ok = !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
          return c >= '0' && c <= '9';
        }) && (digits.size() == 1 || digits[0] != '0');
        if (ok) return {};
        return fmt::format("'{}' is not a {}whole number in decimal", text,
                           allow_sign ? "" : "non-negative ");
      },
      "");  // an empty description: the help keeps its type name as it was
}

}  // namespace

void check_whole_numbers(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    const std::string type = o->get_type_name();
    if (type.starts_with("UINT"))
      o->check(decimal(false));
    else if (type.starts_with("INT"))
      o->check(decimal(true));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    check_whole_numbers(*sub);
}

}  // namespace eit::cli
