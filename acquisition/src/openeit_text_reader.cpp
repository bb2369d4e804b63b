// OpenEIT text recordings: one frame per line, "magnitudes : v,v,…," (the simulator's
// simdata.txt) or the firmware's "magnitudes: " + "%8d.%04d," values ending "\r\n". Other lines
// (blank, debug text) are skipped; a "magnitudes" line that does not parse is a bad frame,
// counted when read. Order: pyEIT 'std' with opposition drive (n/2), adjacent pairs, no
// measurements on driven electrodes: 8, 16, 32 electrodes → 32, 192, 896 values.
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "file_handle.hpp"
#include "openeit_line.hpp"
#include "recording_formats.hpp"
#include "text_lines.hpp"

namespace eit::acquisition::detail {
namespace {

constexpr uint32_t kMaxLine = 1u << 20;  // 1 MiB: far above 896 values × 24 characters

class OpenEitTextReader final : public RecordingReader {
 public:
  OpenEitTextReader(const fs::path& path, const RecordingOptions& o, const recon::Protocol& model)
      : file_(path) {
    const std::string name = file_label(path);
    const TextLines text = index_lines(file_, kMaxLine);
    line_.resize(text.longest);

    size_t values = o.values_per_frame;
    uint64_t other = 0;
    for (const LineSpan& l : text.lines) {
      std::string_view s = view(l);
      if (s.empty()) continue;
      size_t count = 0;
      const OpenEitLine kind = parse_openeit_line(s, {}, &count);
      if (kind == OpenEitLine::kBlank) continue;
      if (kind == OpenEitLine::kOther) {
        ++other;
        continue;
      }
      if (values == 0 && kind == OpenEitLine::kFrame) values = count;
      frames_.push_back(l);
    }
    if (frames_.empty())
      throw std::runtime_error(fmt::format("{}: no 'magnitudes:' line found (OpenEIT text)", name));
    if (values == 0)
      throw std::runtime_error(fmt::format(
          "{}: none of the {} 'magnitudes:' lines parses as numbers", name, frames_.size()));

    info_.path = path;
    info_.format = "OpenEIT text";
    info_.bytes_total = file_.size();
    info_.raw_values = values;
    info_.n_frames = frames_.size();
    if (other > 0)
      info_.warnings.push_back(
          fmt::format("{}: {} lines that are not frames skipped", name, other));
    if (text.too_long > 0)
      info_.warnings.push_back(
          fmt::format("{}: {} lines over {} bytes skipped", name, text.too_long, kMaxLine));

    DeviceLayout l = o.layout.empty() ? openeit_layout(values) : DeviceLayout{};
    if (!o.layout.empty()) l = generic_layout(path, values, false, o, model);
    l.raw_values = values;
    set_map(o.layout.empty() ? with_overrides(l, o, model) : l, model);
  }

 protected:
  bool read_raw(size_t i, std::span<double> raw) noexcept override {
    const LineSpan& l = frames_[i];
    if (!file_.read_at(l.offset, line_.data(), l.length)) return false;
    return parse_openeit_line(std::string_view(line_.data(), l.length), raw) == OpenEitLine::kFrame;
  }

 private:
  std::string_view view(const LineSpan& l) {
    if (!file_.read_at(l.offset, line_.data(), l.length)) return {};
    return {line_.data(), l.length};
  }

  FileHandle file_;
  std::vector<LineSpan> frames_;
  std::vector<char> line_;
};

}  // namespace

ReaderPtr open_openeit_text(const fs::path& path, const RecordingOptions& o,
                            const recon::Protocol& m) {
  return std::make_unique<OpenEitTextReader>(path, o, m);
}

}  // namespace eit::acquisition::detail
