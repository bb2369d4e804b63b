// NumPy .npy stacks: a 2-D array (frames × values) of little-endian float32 ('<f4') or float64
// ('<f8') in C order, or a 1-D array (one frame). Format: "\x93NUMPY", version bytes, a uint16
// (v1) or uint32 (v2, v3) header length, a Python-literal header dict {'descr', 'fortran_order',
// 'shape'}, then the data. A file shorter than its shape says keeps its whole frames and
// reports the cut.
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/acquisition/raw_frame_decoder.hpp"
#include "file_handle.hpp"
#include "recording_formats.hpp"

namespace eit::acquisition::detail {
namespace {

// The text after "'key':" in the header dict (leading spaces removed), or empty.
std::string_view dict_value(std::string_view header, std::string_view key) {
  const std::string quoted = fmt::format("'{}'", key);
  size_t at = header.find(quoted);
  if (at == std::string_view::npos) return {};
  at = header.find(':', at + quoted.size());
  if (at == std::string_view::npos) return {};
  std::string_view v = header.substr(at + 1);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  return v;
}

class NpyReader final : public RecordingReader {
 public:
  NpyReader(const fs::path& path, const RecordingOptions& o, const recon::Protocol& model)
      : file_(path) {
    const std::string name = file_label(path);
    uint8_t pre[12] = {};
    if (file_.size() < 10 || !file_.read_at(0, pre, std::min<uint64_t>(12, file_.size())) ||
        std::memcmp(pre, "\x93NUMPY", 6) != 0)
      throw std::runtime_error(fmt::format("{}: no '\\x93NUMPY' magic: not a .npy file", name));
    const int major = pre[6];
    uint64_t header_len = 0, header_at = 0;
    if (major == 1) {
      header_len = uint64_t(pre[8]) | uint64_t(pre[9]) << 8;
      header_at = 10;
    } else if (major == 2 || major == 3) {
      header_len = uint64_t(pre[8]) | uint64_t(pre[9]) << 8 | uint64_t(pre[10]) << 16 |
                   uint64_t(pre[11]) << 24;
      header_at = 12;
    } else {
      throw std::runtime_error(fmt::format("{}: .npy version {}, expected 1, 2 or 3", name, major));
    }
    if (header_len > 1'000'000 || header_at + header_len > file_.size())
      throw std::runtime_error(fmt::format("{}: header length {} runs past the file's {} bytes",
                                           name, header_len, file_.size()));
    std::string header(header_len, '\0');
    if (!file_.read_at(header_at, header.data(), header_len))
      throw std::runtime_error(fmt::format("{}: cannot read the header", name));
    data_at_ = header_at + header_len;

    const std::string_view descr = dict_value(header, "descr");
    if (descr.starts_with("'<f4'")) {
      type_ = SampleType::kFloat32;
    } else if (descr.starts_with("'<f8'")) {
      type_ = SampleType::kFloat64;
    } else {
      throw std::runtime_error(
          fmt::format("{}: descr {}, expected '<f4' or '<f8' (little-endian float32/float64)", name,
                      descr.substr(0, descr.find_first_of(",}"))));
    }
    if (!dict_value(header, "fortran_order").starts_with("False"))
      throw std::runtime_error(fmt::format(
          "{}: fortran_order is not False; save the array in C order (np.ascontiguousarray)",
          name));
    std::string_view shape = dict_value(header, "shape");
    if (shape.empty() || shape.front() != '(')
      throw std::runtime_error(fmt::format("{}: header has no 'shape' tuple", name));
    shape = shape.substr(1, shape.find(')') == std::string_view::npos ? 0 : shape.find(')') - 1);
    std::vector<uint64_t> dims;
    for (size_t p = 0; p < shape.size();) {
      while (p < shape.size() && (shape[p] == ' ' || shape[p] == ',')) ++p;
      if (p >= shape.size()) break;
      uint64_t d = 0;
      const auto r = std::from_chars(shape.data() + p, shape.data() + shape.size(), d);
      if (r.ec != std::errc())
        throw std::runtime_error(
            fmt::format("{}: shape ({}) is not a tuple of integers", name, shape));
      dims.push_back(d);
      p = static_cast<size_t>(r.ptr - shape.data());
    }
    if (dims.empty() || dims.size() > 2)
      throw std::runtime_error(
          fmt::format("{}: shape ({}) has {} dimensions, expected 2 (frames × values) or 1", name,
                      shape, dims.size()));
    const uint64_t frames = dims.size() == 2 ? dims[0] : 1;
    const uint64_t values = dims.back();
    if (values == 0 || values > (1u << 24))
      throw std::runtime_error(fmt::format("{}: {} values per frame", name, values));
    frame_bytes_ = values * (type_ == SampleType::kFloat32 ? 4 : 8);

    info_.path = path;
    info_.format = type_ == SampleType::kFloat32 ? ".npy float32" : ".npy float64";
    info_.bytes_total = file_.size();
    info_.raw_values = values;
    const uint64_t available = (file_.size() - data_at_) / frame_bytes_;
    info_.n_frames = std::min(frames, available);
    if (available < frames) {
      info_.truncated_bytes = (file_.size() - data_at_) - available * frame_bytes_;
      info_.warnings.push_back(
          fmt::format("{}: shape says {} frames but the data holds {} whole ones; delivering those",
                      name, frames, available));
    }
    if (info_.n_frames == 0)
      throw std::runtime_error(fmt::format("{}: no whole frame of {} values", name, values));
    set_map(generic_layout(path, values, false, o, model), model);
    bytes_.resize(frame_bytes_);
  }

 protected:
  bool read_raw(size_t i, std::span<double> raw) noexcept override {
    if (!file_.read_at(data_at_ + uint64_t(i) * frame_bytes_, bytes_.data(), frame_bytes_))
      return false;
    decode_samples(bytes_.data(), raw.size(), type_, raw.data());
    return true;
  }

 private:
  FileHandle file_;
  SampleType type_ = SampleType::kFloat32;
  uint64_t data_at_ = 0;
  uint64_t frame_bytes_ = 0;
  std::vector<uint8_t> bytes_;
};

}  // namespace

ReaderPtr open_npy(const fs::path& path, const RecordingOptions& o, const recon::Protocol& m) {
  return std::make_unique<NpyReader>(path, o, m);
}

}  // namespace eit::acquisition::detail
