#pragma once
// Parsing one OpenEIT text line, shared by the file reader and the stream decoder. Accepts the
// simulator's "magnitudes : v,v,…," (full-precision floats, "\n") and the firmware's
// "magnitudes: " + "%8d.%04d," values ("\r\n"): spaces around tokens, a trailing comma and a
// trailing '\r' are allowed. No allocation, no throw.
#include <cstddef>
#include <span>
#include <string_view>

namespace eit::acquisition::detail {

enum class OpenEitLine {
  kBlank,  // empty or whitespace only: ignored
  kOther,  // not a "magnitudes" line (debug text, another mode): skipped
  kFrame,  // exactly out.size() numbers written to out
  kBad,    // a "magnitudes" line with a non-numeric token or the wrong number of values
};

// Classifies `line` (without its '\n') and, for a frame, writes its values to out. `count`, when
// given, receives the number of numeric tokens seen; with an empty `out` the line only counts
// (kFrame when every token is numeric), to find a file's frame size.
OpenEitLine parse_openeit_line(std::string_view line, std::span<double> out,
                               size_t* count = nullptr) noexcept;

}  // namespace eit::acquisition::detail
