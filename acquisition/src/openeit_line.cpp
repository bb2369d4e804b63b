#include "openeit_line.hpp"

#include <charconv>

namespace eit::acquisition::detail {
namespace {

constexpr std::string_view kPrefix = "magnitudes";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

OpenEitLine parse_openeit_line(std::string_view line, std::span<double> out,
                               size_t* count) noexcept {
  if (count) *count = 0;
  line = trim(line);
  if (line.empty()) return OpenEitLine::kBlank;
  if (line.substr(0, kPrefix.size()) != kPrefix) return OpenEitLine::kOther;
  std::string_view rest = trim(line.substr(kPrefix.size()));
  if (rest.empty() || rest.front() != ':') return OpenEitLine::kOther;
  rest.remove_prefix(1);

  size_t n = 0;
  bool ok = true;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view token = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (token.empty()) {
      // Only the empty token after a trailing comma is allowed.
      if (!trim(rest).empty() || comma == std::string_view::npos) ok = false;
      break;
    }
    double v = 0.0;
    const auto r = std::from_chars(token.data(), token.data() + token.size(), v);
    if (r.ec != std::errc() || r.ptr != token.data() + token.size()) {
      ok = false;
      break;
    }
    if (n < out.size()) out[n] = v;
    ++n;
  }
  if (count) *count = n;
  if (!ok || n == 0) return OpenEitLine::kBad;
  if (out.empty()) return OpenEitLine::kFrame;  // counting only
  return n == out.size() ? OpenEitLine::kFrame : OpenEitLine::kBad;
}

}  // namespace eit::acquisition::detail
