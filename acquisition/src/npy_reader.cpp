// NumPy .npy stacks: a 2-D array (frames × values) of little-endian float32 ('<f4') or float64
// ('<f8'), or complex64/complex128 ('<c8', '<c16': (re, im) pairs, --complex picks the part or
// keeps both) in C order, or a 1-D array (one frame). Format: "\x93NUMPY", version bytes, a uint16
// (v1) or uint32 (v2, v3) header length, a Python-literal header dict {'descr', 'fortran_order',
// 'shape'}, then the data; the header is parsed by recon's hardened parser (npy_header.hpp). A
// file shorter than its shape says keeps its whole frames and reports the cut.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eit/acquisition/raw_frame_decoder.hpp"
#include "eit/recon/npy_header.hpp"
#include "file_handle.hpp"
#include "recording_formats.hpp"

namespace eit::acquisition::detail {
namespace {

class NpyReader final : public RecordingReader {
 public:
  NpyReader(const fs::path& path, const RecordingOptions& o, const recon::Protocol& model)
      : file_(path) {
    const std::string name = file_label(path);
    // The header through recon's hardened parser (shared with recon::read_npy).
    std::vector<uint8_t> start(std::min<uint64_t>(file_.size(), recon::kNpyMaxPrefixBytes));
    if (!file_.read_at(0, start.data(), start.size()))
      throw std::runtime_error(fmt::format("{}: cannot read the header", name));
    const recon::NpyHeader h = recon::parse_npy_header(start, file_.size(), name);
    data_at_ = h.data_offset;
    if (h.kind == 'f' && h.width == 4 && h.byte_order == '<') {
      type_ = SampleType::kFloat32;
    } else if (h.kind == 'f' && h.width == 8 && h.byte_order == '<') {
      type_ = SampleType::kFloat64;
    } else if (h.kind == 'c' && (h.width == 8 || h.width == 16) && h.byte_order == '<') {
      complex_ = true;
      type_ = h.width == 8 ? SampleType::kFloat32 : SampleType::kFloat64;
    } else {
      throw std::runtime_error(
          fmt::format("{}: descr '{}', expected '<f4', '<f8', '<c8' or '<c16' (little-endian "
                      "float32/float64/complex64/complex128)",
                      name, h.descr));
    }
    if (h.fortran_order)
      throw std::runtime_error(fmt::format(
          "{}: fortran_order is not False; save the array in C order (np.ascontiguousarray)",
          name));
    const std::vector<uint64_t>& dims = h.shape;
    if (dims.empty() || dims.size() > 2)
      throw std::runtime_error(
          fmt::format("{}: shape ({}) has {} dimensions, expected 2 (frames × values) or 1", name,
                      fmt::join(dims, ", "), dims.size()));
    const uint64_t frames = dims.size() == 2 ? dims[0] : 1;
    const uint64_t values = dims.back();
    if (values == 0 || values > kMaxValuesPerFrame)
      throw std::runtime_error(fmt::format("{}: {} values per frame", name, values));
    frame_bytes_ = values * (type_ == SampleType::kFloat32 ? 4 : 8) * (complex_ ? 2 : 1);

    info_.path = path;
    info_.format = complex_ ? (type_ == SampleType::kFloat32 ? ".npy complex64" : ".npy complex128")
                            : (type_ == SampleType::kFloat32 ? ".npy float32" : ".npy float64");
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
    // Frames in columns (NumPy's a.T, MATLAB's orientation): --layout cannot fix that.
    if (dims.size() == 2 && frames == model.n_meas() && values != model.n_meas() &&
        o.layout.empty())
      throw std::runtime_error(
          fmt::format("{}: shape ({}, {}) is values × frames; expected frames × values: save "
                      "np.ascontiguousarray(a.T)",
                      name, frames, values));
    set_map(generic_layout(path, values, complex_, o, model), model);
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
  SampleType type_ = SampleType::kFloat32;  // of each part when complex_
  bool complex_ = false;
  uint64_t data_at_ = 0;
  uint64_t frame_bytes_ = 0;
  std::vector<uint8_t> bytes_;
};

}  // namespace

ReaderPtr open_npy(const fs::path& path, const RecordingOptions& o, const recon::Protocol& m) {
  return std::make_unique<NpyReader>(path, o, m);
}

}  // namespace eit::acquisition::detail
