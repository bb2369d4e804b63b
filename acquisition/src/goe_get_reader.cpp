// Göttingen Goe-MF II / Viasys .get, and the older Dräger .get (≤ 2007) that prefixes the same
// frames with a text header. Facts from EIDORS eidors_readdata.m (mceit_readdata,
// draeger_get_readdata) and the shared data README; own code.
//   frames   256 float32 LE: values 1–208 adjacent voltages in rotate_meas order (16 electrodes,
//            no measurements on driven electrodes), 209–224 currents, 225–240 drive voltages,
//            241–256 aux. A variant with 104 measurements (value 39 is 0) is not supported.
//   Dräger   text starting "---Draeger EIT-Software---", ended by two empty lines.
//   rate     "Framerate = 13 per second" in the .prl file beside the .get, when present.
#include <bit>
#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "file_handle.hpp"
#include "recording_formats.hpp"

namespace eit::acquisition::detail {
namespace {

constexpr size_t kValues = 256;
constexpr size_t kFrameBytes = kValues * 4;
constexpr std::string_view kDraegerMagic = "---Draeger EIT-Software---";

float le_f32(const uint8_t* p) {
  return std::bit_cast<float>(uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
                              uint32_t(p[3]) << 24);
}

// Offset of the first frame after a Dräger text header: the byte after two consecutive empty
// lines. 0 when the header never ends within the first 64 KiB.
uint64_t draeger_header_end(const FileHandle& f) {
  std::string text(static_cast<size_t>(std::min<uint64_t>(f.size(), 65536)), '\0');
  if (!f.read_at(0, text.data(), text.size())) return 0;
  int empty = 0;
  size_t start = 0;
  for (size_t p = 0; p < text.size(); ++p) {
    if (text[p] != '\n') continue;
    size_t len = p - start;
    if (len > 0 && text[start + len - 1] == '\r') --len;
    empty = len == 0 ? empty + 1 : 0;
    start = p + 1;
    if (empty == 2) return start;
  }
  return 0;
}

// "Framerate = 13 per second" from the .prl beside the .get; 0 when absent.
double prl_rate(const fs::path& get_path, std::string* source) {
  fs::path prl = get_path;
  prl.replace_extension(".prl");
  std::ifstream in(prl);
  if (!in) return 0.0;
  std::string line;
  while (std::getline(in, line)) {
    const size_t at = line.find("Framerate");
    if (at == std::string::npos) continue;
    const size_t eq = line.find('=', at);
    if (eq == std::string::npos) continue;
    size_t p = eq + 1;
    while (p < line.size() && line[p] == ' ') ++p;
    double v = 0.0;
    const auto r = std::from_chars(line.data() + p, line.data() + line.size(), v);
    if (r.ec == std::errc() && v > 0) {
      *source = prl.filename().string();
      return v;
    }
  }
  return 0.0;
}

class GoeGetReader final : public RecordingReader {
 public:
  GoeGetReader(const fs::path& path, const RecordingOptions& o, const recon::Protocol& model)
      : file_(path) {
    const std::string name = file_label(path);
    char magic[kDraegerMagic.size()] = {};
    const bool draeger = file_.size() >= sizeof(magic) && file_.read_at(0, magic, sizeof(magic)) &&
                         std::string_view(magic, sizeof(magic)) == kDraegerMagic;
    if (draeger) {
      offset_ = draeger_header_end(file_);
      if (offset_ == 0)
        throw std::runtime_error(fmt::format(
            "{}: Dräger .get header has no end (two empty lines) in its first 64 KiB", name));
    }
    info_.path = path;
    info_.format = draeger ? "Dräger .get (≤2007)" : "Goe-MF II .get";
    info_.bytes_total = file_.size();
    info_.raw_values = kValues;
    const uint64_t payload = file_.size() - offset_;
    info_.n_frames = payload / kFrameBytes;
    if (info_.n_frames == 0)
      throw std::runtime_error(fmt::format(
          "{}: {} bytes of frames, less than one frame of {} float32", name, payload, kValues));
    if (payload % kFrameBytes != 0) {
      info_.truncated_bytes = payload % kFrameBytes;
      info_.warnings.push_back(fmt::format(
          "{}: frame {} is truncated ({} of {} bytes); delivering the {} whole frames", name,
          info_.n_frames + 1, info_.truncated_bytes, kFrameBytes, info_.n_frames));
    }
    uint8_t first[kFrameBytes];
    if (!file_.read_at(offset_, first, kFrameBytes))
      throw std::runtime_error(fmt::format("{}: cannot read the first frame", name));
    if (le_f32(first + 38 * 4) == 0.0f)
      throw std::runtime_error(fmt::format(
          "{}: value 39 of the first frame is 0: the 104-measurement (no reciprocity) variant, "
          "expected 208 measurements",
          name));
    info_.rate_hz = prl_rate(path, &info_.rate_source);
    if (info_.rate_hz == 0.0)
      info_.warnings.push_back(
          fmt::format("{}: no .prl with 'Framerate = …' beside it; give --fps", name));

    DeviceLayout l;
    l.n_electrodes = 16;
    l.order = recon::MeasurementOrder::kRotateMeas;
    l.raw_values = kValues;
    set_map(with_overrides(l, o, model), model);
  }

 protected:
  bool read_raw(size_t i, std::span<double> raw) noexcept override {
    if (!file_.read_at(offset_ + uint64_t(i) * kFrameBytes, bytes_, kFrameBytes)) return false;
    for (size_t k = 0; k < kValues; ++k) raw[k] = le_f32(bytes_ + 4 * k);
    return true;
  }

 private:
  FileHandle file_;
  uint64_t offset_ = 0;
  uint8_t bytes_[kFrameBytes];
};

}  // namespace

ReaderPtr open_goe_get(const fs::path& path, const RecordingOptions& o, const recon::Protocol& m) {
  return std::make_unique<GoeGetReader>(path, o, m);
}

}  // namespace eit::acquisition::detail
