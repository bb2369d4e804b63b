#include "text_lines.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace eit::acquisition::detail {

TextLines index_lines(const FileHandle& file, uint32_t max_line) {
  TextLines t;
  std::vector<char> chunk(static_cast<size_t>(std::min<uint64_t>(file.size() + 1, 1 << 20)));
  uint64_t start = 0, pos = 0;
  auto close_line = [&](uint64_t end) {
    const uint64_t len = end - start;
    if (len > max_line) {
      ++t.too_long;
    } else {
      t.lines.push_back({start, static_cast<uint32_t>(len)});
      if (len > t.longest) t.longest = static_cast<uint32_t>(len);
    }
  };
  while (pos < file.size()) {
    const long got = file.read_some(pos, chunk.data(), chunk.size());
    if (got <= 0)
      throw std::runtime_error(
          fmt::format("{}: read error at byte {}", file_label(file.path()), pos));
    const char* p = chunk.data();
    const char* end = p + got;
    while (p < end) {
      const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
      if (!nl) break;
      const uint64_t at = pos + static_cast<uint64_t>(static_cast<const char*>(nl) - chunk.data());
      close_line(at);
      start = at + 1;
      p = static_cast<const char*>(nl) + 1;
    }
    pos += static_cast<uint64_t>(got);
  }
  if (start < file.size()) {
    close_line(file.size());
    t.last_unterminated = true;
  }
  return t;
}

}  // namespace eit::acquisition::detail
