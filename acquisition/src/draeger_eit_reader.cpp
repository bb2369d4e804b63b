// Dräger PulmoVista 500 raw-voltage .eit (formats 31, 32, 51). Facts from EIDORS
// eidors_readdata.m (read_draeger_file/header) and the shared data README; own code.
//   bytes 0..3   uint32 format (0x1F = 31, 0x20 = 32, 0x33 = 51)
//   bytes 4..7   uint32; + 16 = offset of the first frame
//   text header  "Framerate [Hz]:  20" among other fields
//   frames       stride 4112 / 5200 / 5495 bytes, each starting with 600 float64 (LE)
//   voltages     v = 0.00098242·d[0:208] − 0.00019607·d[322:530], 16 electrodes, adjacent drive,
//                rotate_meas order, no measurements on driven electrodes.
#include <bit>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "file_handle.hpp"
#include "recording_formats.hpp"

namespace eit::acquisition::detail {
namespace {

constexpr double kGain = 0.00098242;
constexpr double kOffsetGain = 0.00019607;
constexpr size_t kVoltages = 208;
constexpr size_t kSecondBlock = 322;
constexpr size_t kDoublesRead = kSecondBlock + kVoltages;  // 530 of the 600 float64 are used

uint32_t le_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

double le_f64(const uint8_t* p) {
  uint64_t u = 0;
  for (int b = 7; b >= 0; --b) u = (u << 8) | p[b];
  return std::bit_cast<double>(u);
}

// The number after `field` in the header text, or 0 when absent or not a number.
double header_number(std::string_view header, std::string_view field) {
  const size_t at = header.find(field);
  if (at == std::string_view::npos) return 0.0;
  size_t p = at + field.size();
  while (p < header.size() && (header[p] == ' ' || header[p] == '\t')) ++p;
  double v = 0.0;
  const auto r = std::from_chars(header.data() + p, header.data() + header.size(), v);
  return r.ec == std::errc() ? v : 0.0;
}

class DraegerEitReader final : public RecordingReader {
 public:
  DraegerEitReader(const fs::path& path, const RecordingOptions& o, const recon::Protocol& model)
      : file_(path) {
    const std::string name = file_label(path);
    uint8_t head[8];
    if (file_.size() < 8 || !file_.read_at(0, head, 8))
      throw std::runtime_error(
          fmt::format("{}: {} bytes, too short for a Dräger .eit header", name, file_.size()));
    const uint32_t format = le_u32(head);
    switch (format) {
      case 31:
        stride_ = 4112;
        break;
      case 32:
        stride_ = 5200;
        break;
      case 51:
        stride_ = 5495;
        break;
      default:
        throw std::runtime_error(
            fmt::format("{}: format field (bytes 0–3) is {}, expected 31, 32 or 51 (Dräger .eit)",
                        name, format));
    }
    offset_ = uint64_t(le_u32(head + 4)) + 16;
    if (offset_ > file_.size())
      throw std::runtime_error(
          fmt::format("{}: data offset (bytes 4–7, +16) is {}, beyond the file's {} bytes", name,
                      offset_, file_.size()));

    std::string header(offset_ - 8, '\0');
    if (!file_.read_at(8, header.data(), header.size()))
      throw std::runtime_error(fmt::format("{}: cannot read the {}-byte header", name, offset_));
    const double text_format = header_number(header, "Format:");
    if (text_format != 0.0 && text_format != double(format))
      info_.warnings.push_back(fmt::format("{}: header text says Format {} but bytes 0–3 say {}",
                                           name, text_format, format));

    info_.path = path;
    info_.format = fmt::format("Dräger .eit v{}", format);
    info_.bytes_total = file_.size();
    info_.raw_values = 600;
    info_.rate_hz = header_number(header, "Framerate [Hz]:");
    if (info_.rate_hz > 0) {
      info_.rate_source = "header Framerate [Hz]";
    } else {
      info_.warnings.push_back(
          fmt::format("{}: header has no usable 'Framerate [Hz]:' field; give --fps", name));
    }

    // A frame is whole when its stride fits and the 530 float64 it uses are in the file (format
    // 31's stride is shorter than 600 float64, so the two conditions differ there).
    const uint64_t payload = file_.size() - offset_;
    uint64_t n = payload / stride_;
    while (n > 0 && offset_ + (n - 1) * stride_ + kDoublesRead * 8 > file_.size()) --n;
    if (n == 0)
      throw std::runtime_error(fmt::format(
          "{}: {} bytes after the {}-byte header, less than one frame ({} bytes, format {})", name,
          payload, offset_, stride_, format));
    info_.n_frames = n;
    const uint64_t used = n * stride_;
    if (payload > used) {
      info_.truncated_bytes = payload - used;
      info_.warnings.push_back(
          fmt::format("{}: frame {} is truncated ({} of {} bytes); delivering the {} whole frames",
                      name, n + 1, payload - used, stride_, n));
    }

    DeviceLayout l;
    l.n_electrodes = 16;
    l.order = recon::MeasurementOrder::kRotateMeas;
    l.raw_values = kVoltages;
    set_map(with_overrides(l, o, model), model);
  }

 protected:
  bool read_raw(size_t i, std::span<double> raw) noexcept override {
    if (!file_.read_at(offset_ + uint64_t(i) * stride_, bytes_, sizeof(bytes_))) return false;
    for (size_t k = 0; k < kVoltages; ++k)
      raw[k] =
          kGain * le_f64(bytes_ + 8 * k) - kOffsetGain * le_f64(bytes_ + 8 * (kSecondBlock + k));
    return true;
  }

 private:
  FileHandle file_;
  uint64_t offset_ = 0;
  uint64_t stride_ = 0;
  uint8_t bytes_[kDoublesRead * 8];
};

}  // namespace

ReaderPtr open_draeger_eit(const fs::path& path, const RecordingOptions& o,
                           const recon::Protocol& m) {
  return std::make_unique<DraegerEitReader>(path, o, m);
}

}  // namespace eit::acquisition::detail
