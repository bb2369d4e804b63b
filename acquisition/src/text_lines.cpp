#include "text_lines.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace eit::acquisition::detail {

TextLines index_lines(const FileHandle& file, uint32_t max_line) {
  TextLines t;
  std::vector<char> chunk(static_cast<size_t>(std::min<uint64_t>(file.size() + 1, 1 << 20)));
  uint64_t start = 0, pos = 0;
  bool cr_pending = false;  // the last byte seen was '\r': a line end unless '\n' follows
  uint64_t cr_at = 0;
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
    for (long i = 0; i < got; ++i) {
      const char c = chunk[static_cast<size_t>(i)];
      const uint64_t at = pos + static_cast<uint64_t>(i);
      if (cr_pending) {
        cr_pending = false;
        if (c != '\n') {  // a lone '\r' ended the line (classic Mac; OpenEIT's dashboard logs)
          close_line(cr_at);
          start = cr_at + 1;
        }
      }
      if (c == '\n') {
        close_line(at);  // a "\r\n" line keeps its '\r', which the readers skip
        start = at + 1;
      } else if (c == '\r') {
        cr_pending = true;
        cr_at = at;
      }
    }
    pos += static_cast<uint64_t>(got);
  }
  if (cr_pending) {
    close_line(cr_at);
    start = cr_at + 1;
  }
  if (start < file.size()) {
    close_line(file.size());
    t.last_unterminated = true;
  }
  return t;
}

}  // namespace eit::acquisition::detail
