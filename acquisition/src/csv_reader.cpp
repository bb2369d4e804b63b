// CSV recordings: one frame per row, values separated by ',', ';', tabs or spaces. A first row
// that does not start with a number is a header and skipped, and so is a first row of column
// numbers 0, 1, …, N−1 or 1, …, N (pandas' to_csv(index=False) writes one): read as a frame it
// would spoil the reference. Blank rows and rows starting with '#' are skipped too. The value count
// comes from the first data row (or --values-per-frame); a row with a non-numeric token or another
// count is a bad frame, counted when read.
#include <charconv>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "file_handle.hpp"
#include "recording_formats.hpp"
#include "text_lines.hpp"

namespace eit::acquisition::detail {
namespace {

constexpr uint32_t kMaxLine = 1u << 22;

bool is_separator(char c) { return c == ',' || c == ';' || c == '\t' || c == ' ' || c == '\r'; }

// Parses a row into out (counting only when out is empty). Returns the value count, or −1 when a
// token is not a number or there are more values than out holds.
long parse_row(std::string_view row, std::span<double> out) noexcept {
  size_t n = 0, p = 0;
  while (p < row.size()) {
    while (p < row.size() && (row[p] == ' ' || row[p] == '\t' || row[p] == '\r')) ++p;
    if (p >= row.size()) break;
    size_t q = p;
    while (q < row.size() && !is_separator(row[q])) ++q;
    double v = 0.0;
    const auto r = std::from_chars(row.data() + p, row.data() + q, v);
    if (r.ec != std::errc() || r.ptr != row.data() + q) return -1;
    if (!out.empty()) {
      if (n >= out.size()) return -1;
      out[n] = v;
    }
    ++n;
    while (q < row.size() && (row[q] == ' ' || row[q] == '\t' || row[q] == '\r')) ++q;
    if (q < row.size() && (row[q] == ',' || row[q] == ';')) ++q;  // one explicit separator
    p = q;
  }
  return static_cast<long>(n);
}

// True when the row is exactly the column numbers 0..n−1 or 1..n (n ≥ 8: a device frame of a few
// counting values is not ruled out by this, but no frame of 8 or more is 0, 1, 2, …).
bool is_column_numbers(std::string_view row, long n) {
  if (n < 8) return false;
  std::vector<double> v(static_cast<size_t>(n));
  if (parse_row(row, v) != n) return false;
  for (const double first : {0.0, 1.0}) {
    bool all = true;
    for (long i = 0; i < n && all; ++i) all = v[static_cast<size_t>(i)] == first + double(i);
    if (all) return true;
  }
  return false;
}

class CsvReader final : public RecordingReader {
 public:
  CsvReader(const fs::path& path, const RecordingOptions& o, const recon::Protocol& model)
      : file_(path) {
    const std::string name = file_label(path);
    const TextLines text = index_lines(file_, kMaxLine);
    line_.resize(text.longest);
    size_t values = o.values_per_frame;
    bool first = true;
    for (const LineSpan& l : text.lines) {
      if (!file_.read_at(l.offset, line_.data(), l.length))
        throw std::runtime_error(fmt::format("{}: read error at byte {}", name, l.offset));
      std::string_view row(line_.data(), l.length);
      const size_t lead = row.find_first_not_of(" \t\r");
      if (lead == std::string_view::npos || row[lead] == '#') continue;
      const long count = parse_row(row, {});
      if (first && count < 0) {
        info_.warnings.push_back(fmt::format("{}: first row is a header, skipped", name));
        first = false;
        continue;
      }
      if (first && is_column_numbers(row, count)) {
        info_.warnings.push_back(
            fmt::format("{}: first row is the column numbers 0..{} or 1..{} (a header), skipped",
                        name, count - 1, count));
        first = false;
        continue;
      }
      first = false;
      if (values == 0 && count > 0) values = static_cast<size_t>(count);
      rows_.push_back(l);
    }
    if (rows_.empty() || values == 0)
      throw std::runtime_error(fmt::format("{}: no numeric rows (CSV, one frame per row)", name));
    info_.path = path;
    info_.format = "CSV";
    info_.bytes_total = file_.size();
    info_.raw_values = values;
    info_.n_frames = rows_.size();
    if (text.too_long > 0)
      info_.warnings.push_back(
          fmt::format("{}: {} rows over {} bytes skipped", name, text.too_long, kMaxLine));
    set_map(generic_layout(path, values, false, o, model), model);
  }

 protected:
  bool read_raw(size_t i, std::span<double> raw) noexcept override {
    const LineSpan& l = rows_[i];
    if (!file_.read_at(l.offset, line_.data(), l.length)) return false;
    return parse_row(std::string_view(line_.data(), l.length), raw) == long(raw.size());
  }

 private:
  FileHandle file_;
  std::vector<LineSpan> rows_;
  std::vector<char> line_;
};

}  // namespace

ReaderPtr open_csv(const fs::path& path, const RecordingOptions& o, const recon::Protocol& m) {
  return std::make_unique<CsvReader>(path, o, m);
}

}  // namespace eit::acquisition::detail
