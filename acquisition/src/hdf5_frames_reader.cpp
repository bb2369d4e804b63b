// eitstream raw-frame files (HDF5, format "eitstream-frames", written by `eitstream run
// --record-raw`; layout in docs/formats.md): /frames float32 [n × n_meas] in the order of the
// protocol stored beside them. Frames are mapped onto the replaying model's order through that
// protocol, so a recording made with one model can be replayed or reconstructed with another of
// the same electrode count. RecordingOptions::variable picks another dataset (e.g. "v_ref", the
// reference frame stored at record time, read as a one-frame recording). A file whose root
// attribute `complex` is "interleaved" holds (re, im) pairs per measurement (2·n_meas floats per
// row), read as complex frames: --complex picks the part or keeps both, as for any complex file.
#include <hdf5.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "eit/pipeline/frame.hpp"
#include "eit/recon/hdf5_io.hpp"
#include "eit/recon/model_groups.hpp"
#include "file_handle.hpp"
#include "recording_formats.hpp"

namespace eit::acquisition::detail {
namespace {

namespace h5 = recon::h5;

constexpr size_t kBlockRows = 256;  // rows read per HDF5 call

class Hdf5FramesReader final : public RecordingReader {
 public:
  Hdf5FramesReader(const fs::path& path, const RecordingOptions& o, const recon::Protocol& model)
      : name_(file_label(path)) {
    // Refusals below say what is wrong; HDF5's own error stack on stderr would only repeat it.
    const h5::QuietErrors quiet;
    // SWMR read lets a file that is still being recorded be opened (its frames so far).
    file_ = h5::Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT),
                       H5Fclose);
    if (!file_.valid())
      file_ = h5::Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!file_.valid())
      throw std::runtime_error(fmt::format("{}: not a readable HDF5 file", name_));
    open(path, o, model);
  }

 protected:
  bool read_raw(size_t i, std::span<double> raw) noexcept override {
    if (i < block_start_ || i >= block_start_ + block_rows_) {
      block_start_ = i - i % kBlockRows;
      block_rows_ = std::min(kBlockRows, info_.n_frames - block_start_);
      // Rank 1 (one frame, e.g. /v_ref): the whole vector.
      const hsize_t start[2] = {block_start_, 0};
      const hsize_t count[2] = {rank_ == 2 ? block_rows_ : width_, width_};
      const h5::Handle fs(H5Dget_space(dataset_.get()), H5Sclose);
      H5Sselect_hyperslab(fs.get(), H5S_SELECT_SET, start, nullptr, count, nullptr);
      const h5::Handle ms(H5Screate_simple(rank_, count, nullptr), H5Sclose);
      if (H5Dread(dataset_.get(), H5T_NATIVE_DOUBLE, ms.get(), fs.get(), H5P_DEFAULT,
                  block_.data()) < 0) {
        block_rows_ = 0;
        return false;
      }
    }
    const double* row = block_.data() + (i - block_start_) * width_;
    std::copy(row, row + std::min<size_t>(raw.size(), width_), raw.begin());
    return true;
  }

 public:
  bool origin(size_t i, FrameOrigin& out) const noexcept override {
    if (i >= seq_.size()) return false;
    out.seq = seq_[i];
    out.gap_before = i < flags_.size() && (flags_[i] & pipeline::kFlagGapBefore) != 0;
    out.dropped_before = i < dropped_.size() ? dropped_[i] : 0;
    return true;
  }

 private:
  // The recorder's per-frame columns, when they match /frames row for row (a file written by
  // `run --record-raw`): the frames' original seq, gap flags and drops. Partial columns (a file
  // edited since) are not used: without /seq frames are numbered 0..n-1 as in any other format;
  // without /flags or /dropped_before no frame has a gap or drops before it.
  void read_origins(hid_t root, const std::string& var) {
    if (var != "frames" || !h5::exists(root, "seq")) return;
    auto seq = h5::read_uint64(root, "seq", name_ + ": /seq");
    if (seq.size() != info_.n_frames) return;
    if (h5::exists(root, "flags")) flags_ = h5::read_uint32(root, "flags", name_ + ": /flags");
    if (h5::exists(root, "dropped_before"))
      dropped_ = h5::read_uint32(root, "dropped_before", name_ + ": /dropped_before");
    // A column of another length would give some frames another frame's flag or count.
    if (flags_.size() != seq.size()) flags_.clear();
    if (dropped_.size() != seq.size()) dropped_.clear();
    seq_ = std::move(seq);
  }

  void open(const fs::path& path, const RecordingOptions& o, const recon::Protocol& model) {
    const hid_t root = file_.get();
    const std::string format = optional_string(root, "format", name_);
    if (format != "eitstream-frames")
      throw std::invalid_argument(fmt::format(
          "{}: attribute format is '{}', expected 'eitstream-frames' (an image file or another "
          "HDF5 file cannot be replayed)",
          name_, format));
    const std::string var = o.variable.empty() ? "frames" : o.variable;
    if (!h5::exists(root, var))
      throw std::invalid_argument(fmt::format(
          "{}: no dataset /{} (eitstream raw files hold /frames and /v_ref)", name_, var));
    dataset_ = h5::open_dataset(root, var, fmt::format("{}: /{}", name_, var));
    // The rank first: the dimensions are copied into dims[] whatever their number.
    const h5::Handle space(H5Dget_space(dataset_.get()), H5Sclose);
    hsize_t dims[2] = {0, 0};
    rank_ = H5Sget_simple_extent_ndims(space.get());
    if (rank_ == 1 || rank_ == 2) H5Sget_simple_extent_dims(space.get(), dims, nullptr);
    if (rank_ == 1) {  // one frame (e.g. /v_ref)
      info_.n_frames = 1;
      width_ = dims[0];
    } else if (rank_ == 2) {
      info_.n_frames = dims[0];
      width_ = dims[1];
    } else {
      throw std::invalid_argument(
          fmt::format("{}: /{} has {} dimensions, expected 1 or 2", name_, var, rank_));
    }
    if (info_.n_frames == 0)
      throw std::runtime_error(fmt::format("{}: /{} holds no frames", name_, var));
    info_.path = path;
    info_.format = "eitstream raw frames (HDF5)";
    info_.bytes_total = FileHandle(path).size();
    // 0 = unknown (as --fps 0); a negative, NaN or infinite rate is refused, as --fps refuses it.
    info_.rate_hz = h5::has_attr(root, "frame_rate_hz")
                        ? h5::read_attr_finite_from(root, "frame_rate_hz", 0, name_)
                        : 0;
    if (info_.rate_hz > 0)
      info_.rate_source = "attribute frame_rate_hz";
    else
      info_.warnings.push_back(
          fmt::format("{}: no frame rate recorded; replay needs --fps", name_));
    if (h5::exists(root, "v_ref")) info_.reference_variable = "v_ref";
    if (rank_ == 2) read_origins(root, var);

    // Complex frames: each row is n_meas (re, im) pairs; the measurement count is half the width.
    const std::string complex = optional_string(root, "complex", name_);
    if (!complex.empty() && complex != "interleaved")
      throw std::invalid_argument(fmt::format(
          "{}: attribute complex is '{}', expected 'interleaved' (or absent for real frames)",
          name_, complex));
    const bool is_complex = complex == "interleaved";
    if (is_complex && width_ % 2 != 0)
      throw std::invalid_argument(fmt::format(
          "{}: /{} rows have {} values, expected (re, im) pairs (attribute complex = "
          "'interleaved')",
          name_, var, width_));
    const size_t values = is_complex ? width_ / 2 : width_;
    info_.raw_values = values;
    if (is_complex) info_.format = "eitstream raw frames (HDF5, complex)";

    DeviceLayout l = layout_of(model);
    if (!h5::exists(root, "protocol"))
      throw std::invalid_argument(fmt::format("{}: no /protocol group", name_));
    const recon::ProtocolOptions stored = recon::read_protocol_options(root, name_);
    l.n_electrodes = stored.n_electrodes;
    l.drive_distance = stored.drive_distance;
    l.measure_step = stored.measure_step;
    l.order = stored.order;
    l.full_table = stored.measure_on_driven;
    l.raw_values = values;
    l.complex = is_complex;
    if (l.n_measurements() != values)
      throw std::invalid_argument(fmt::format(
          "{}: /{} rows have {} {}, the stored protocol has {} measurements", name_, var, values,
          is_complex ? "(re, im) pairs" : "values", l.n_measurements()));
    set_map(with_overrides(l, o, model), model);
    block_.assign(kBlockRows * width_, 0.0);
  }

  // An optional string attribute: "" when absent.
  static std::string optional_string(hid_t loc, const char* attr, const std::string& where) {
    return h5::has_attr(loc, attr) ? h5::read_attr_string(loc, attr, where) : std::string();
  }
  std::string name_;
  h5::Handle file_, dataset_;
  int rank_ = 2;
  size_t width_ = 0;
  std::vector<double> block_;
  size_t block_start_ = 0, block_rows_ = 0;
  std::vector<uint64_t> seq_;  // read_origins(): empty when the file does not keep them
  std::vector<uint32_t> flags_, dropped_;
};

}  // namespace

ReaderPtr open_hdf5_frames(const fs::path& path, const RecordingOptions& o,
                           const recon::Protocol& m) {
  return std::make_unique<Hdf5FramesReader>(path, o, m);
}

}  // namespace eit::acquisition::detail
