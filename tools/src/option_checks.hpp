#pragma once
// CLI11 checks of numeric options that say the allowed interval in words: "--fps: 0 is outside
// (0, inf)" instead of CLI11's PositiveNumber, which prints the largest double in 300 digits and
// reads as if 0 were inside. Used by every command's option table.
#include <limits>

#include <CLI/CLI.hpp>

namespace eit::cli {

// A number in an interval, open or closed at either end: within(0, 1, true, false) is (0, 1].
CLI::Validator within(double lo, double hi, bool lo_open, bool hi_open);

// (0, inf): a rate, a size, a count of at least one.
inline CLI::Validator positive() {
  return within(0, std::numeric_limits<double>::infinity(), true, true);
}
// [0, inf): seconds where 0 means "no limit" or "at once".
inline CLI::Validator non_negative() {
  return within(0, std::numeric_limits<double>::infinity(), false, true);
}

// Adds to every whole-number option of `app` and its subcommands a check that the text is a
// decimal whole number: the CLI11 of Debian 12 reads them with strtoull(…, 0), so "-1" became
// 18446744073709551615 frames and "0400" was octal 256. Unsigned options refuse a sign.
void check_whole_numbers(CLI::App& app);

}  // namespace eit::cli
