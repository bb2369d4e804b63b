#pragma once
// TextLines: the offsets and lengths of a text file's lines, found in one pass at set-up, so a
// reader can parse line i on demand. A line longer than max_line is not indexed but counted.
// Private to eit_acquisition.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "file_handle.hpp"

namespace eit::acquisition::detail {

struct LineSpan {
  uint64_t offset;
  uint32_t length;  // without the '\n' (a "\r\n" line keeps its '\r'; a lone '\r' ends a line)
};

struct TextLines {
  std::vector<LineSpan> lines;
  uint64_t too_long = 0;           // lines over max_line, left out
  uint32_t longest = 0;            // of those kept
  bool last_unterminated = false;  // the file ends without '\n' (the last line still counts)
};

TextLines index_lines(const FileHandle& file, uint32_t max_line);

}  // namespace eit::acquisition::detail
