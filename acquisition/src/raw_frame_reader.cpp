// Raw frame files: headerless little-endian float32 or float64, a fixed number of values per
// frame (--values-per-frame; the layout rules of generic_layout apply). A file that ends inside a
// frame keeps the whole frames and reports the cut.
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "eit/acquisition/raw_frame_decoder.hpp"
#include "file_handle.hpp"
#include "recording_formats.hpp"

namespace eit::acquisition::detail {
namespace {

class RawFrameReader final : public RecordingReader {
 public:
  RawFrameReader(const fs::path& path, const RecordingOptions& o, const recon::Protocol& model,
                 bool float64)
      : file_(path), type_(float64 ? SampleType::kFloat64 : SampleType::kFloat32) {
    const std::string name = file_label(path);
    if (o.values_per_frame == 0)
      throw std::invalid_argument(fmt::format(
          "{}: a raw {} file has no header; give its values per frame (--values-per-frame)", name,
          float64 ? "float64" : "float32"));
    const size_t values = o.values_per_frame;
    const size_t sample = float64 ? 8 : 4;
    frame_bytes_ = values * sample;
    info_.path = path;
    info_.format = float64 ? "raw float64" : "raw float32";
    info_.bytes_total = file_.size();
    info_.raw_values = values;
    info_.n_frames = file_.size() / frame_bytes_;
    if (info_.n_frames == 0)
      throw std::runtime_error(
          fmt::format("{}: {} bytes, less than one frame of {} {} values ({} bytes)", name,
                      file_.size(), values, float64 ? "float64" : "float32", frame_bytes_));
    if (file_.size() % frame_bytes_ != 0) {
      info_.truncated_bytes = file_.size() % frame_bytes_;
      info_.warnings.push_back(fmt::format(
          "{}: frame {} is truncated ({} of {} bytes); delivering the {} whole frames", name,
          info_.n_frames + 1, info_.truncated_bytes, frame_bytes_, info_.n_frames));
    }
    set_map(generic_layout(path, values, false, o, model), model);
    bytes_.resize(frame_bytes_);
  }

 protected:
  bool read_raw(size_t i, std::span<double> raw) noexcept override {
    if (!file_.read_at(uint64_t(i) * frame_bytes_, bytes_.data(), frame_bytes_)) return false;
    decode_samples(bytes_.data(), raw.size(), type_, raw.data());
    return true;
  }

 private:
  FileHandle file_;
  SampleType type_;
  size_t frame_bytes_ = 0;
  std::vector<uint8_t> bytes_;
};

}  // namespace

ReaderPtr open_raw_frames(const fs::path& path, const RecordingOptions& o, const recon::Protocol& m,
                          bool float64) {
  return std::make_unique<RawFrameReader>(path, o, m, float64);
}

}  // namespace eit::acquisition::detail
