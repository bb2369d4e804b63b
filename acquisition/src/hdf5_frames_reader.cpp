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

#include "file_handle.hpp"
#include "recording_formats.hpp"

namespace eit::acquisition::detail {
namespace {

constexpr size_t kBlockRows = 256;        // rows read per HDF5 call
constexpr int64_t kMaxElectrodes = 1024;  // as many as any mesh eitstream builds

class Hdf5FramesReader final : public RecordingReader {
 public:
  Hdf5FramesReader(const fs::path& path, const RecordingOptions& o, const recon::Protocol& model)
      : name_(file_label(path)) {
    H5E_auto2_t func = nullptr;
    void* data = nullptr;
    H5Eget_auto2(H5E_DEFAULT, &func, &data);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    // SWMR read lets a file that is still being recorded be opened (its frames so far).
    file_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT);
    if (file_ < 0) file_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, func, data);
    if (file_ < 0) throw std::runtime_error(fmt::format("{}: not a readable HDF5 file", name_));
    try {
      open(path, o, model);
    } catch (...) {
      close();
      throw;
    }
  }
  ~Hdf5FramesReader() override { close(); }

 protected:
  bool read_raw(size_t i, std::span<double> raw) noexcept override {
    if (i < block_start_ || i >= block_start_ + block_rows_) {
      block_start_ = i - i % kBlockRows;
      block_rows_ = std::min(kBlockRows, info_.n_frames - block_start_);
      // Rank 1 (one frame, e.g. /v_ref): the whole vector.
      const hsize_t start[2] = {block_start_, 0};
      const hsize_t count[2] = {rank_ == 2 ? block_rows_ : width_, width_};
      const hid_t fs = H5Dget_space(dataset_);
      H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
      const hid_t ms = H5Screate_simple(rank_, count, nullptr);
      const herr_t rc = H5Dread(dataset_, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, block_.data());
      H5Sclose(ms);
      H5Sclose(fs);
      if (rc < 0) {
        block_rows_ = 0;
        return false;
      }
    }
    const double* row = block_.data() + (i - block_start_) * width_;
    std::copy(row, row + std::min<size_t>(raw.size(), width_), raw.begin());
    return true;
  }

 private:
  void open(const fs::path& path, const RecordingOptions& o, const recon::Protocol& model) {
    const std::string format = string_attr(file_, "format");
    if (format != "eitstream-frames")
      throw std::invalid_argument(fmt::format(
          "{}: attribute format is '{}', expected 'eitstream-frames' (an image file or another "
          "HDF5 file cannot be replayed)",
          name_, format));
    const std::string var = o.variable.empty() ? "frames" : o.variable;
    if (H5Lexists(file_, var.c_str(), H5P_DEFAULT) <= 0)
      throw std::invalid_argument(fmt::format(
          "{}: no dataset /{} (eitstream raw files hold /frames and /v_ref)", name_, var));
    dataset_ = H5Dopen2(file_, var.c_str(), H5P_DEFAULT);
    const hid_t space = H5Dget_space(dataset_);
    hsize_t dims[2] = {0, 0};
    // The rank first: the dimensions are copied into dims[] whatever their number.
    rank_ = H5Sget_simple_extent_ndims(space);
    if (rank_ == 1 || rank_ == 2) H5Sget_simple_extent_dims(space, dims, nullptr);
    H5Sclose(space);
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
    info_.rate_hz = double_attr(file_, "frame_rate_hz");
    if (info_.rate_hz > 0)
      info_.rate_source = "attribute frame_rate_hz";
    else
      info_.warnings.push_back(
          fmt::format("{}: no frame rate recorded; replay needs --fps", name_));
    if (H5Lexists(file_, "v_ref", H5P_DEFAULT) > 0) info_.reference_variable = "v_ref";

    // Complex frames: each row is n_meas (re, im) pairs; the measurement count is half the width.
    const std::string complex = string_attr(file_, "complex");
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
    const hid_t g = H5Gopen2(file_, "protocol", H5P_DEFAULT);
    if (g < 0) throw std::invalid_argument(fmt::format("{}: no /protocol group", name_));
    const struct CloseGroup {
      hid_t id;
      ~CloseGroup() { H5Gclose(id); }
    } close_group{g};  // also when an attribute below is refused
    const int64_t electrodes = int_attr(g, "n_electrodes");
    if (electrodes < 2 || electrodes > kMaxElectrodes)
      throw std::invalid_argument(
          fmt::format("{}: /protocol attribute n_electrodes is {}, expected 2 to {}", name_,
                      electrodes, kMaxElectrodes));
    l.n_electrodes = static_cast<int>(electrodes);
    l.drive_distance = static_cast<int>(int_attr(g, "drive_distance"));
    l.measure_step = static_cast<int>(int_attr(g, "measure_step"));
    l.order = recon::parse_measurement_order(string_attr(g, "order"));
    l.full_table = int_attr(g, "measure_on_driven") != 0;
    l.raw_values = values;
    l.complex = is_complex;
    if (l.n_measurements() != values)
      throw std::invalid_argument(fmt::format(
          "{}: /{} rows have {} {}, the stored protocol has {} measurements", name_, var, values,
          is_complex ? "(re, im) pairs" : "values", l.n_measurements()));
    set_map(with_overrides(l, o, model), model);
    block_.assign(kBlockRows * width_, 0.0);
  }

  // Each attribute is read into one value, so it must hold one: HDF5 writes all it holds.
  void require_one_value(hid_t a, const char* attr) const {
    const hid_t space = H5Aget_space(a);
    const hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    if (space >= 0) H5Sclose(space);
    if (n != 1) {
      H5Aclose(a);
      throw std::invalid_argument(
          fmt::format("{}: attribute {} holds {} values, expected 1", name_, attr, n));
    }
  }
  std::string string_attr(hid_t loc, const char* attr) const {
    if (H5Aexists(loc, attr) <= 0) return {};
    const hid_t a = H5Aopen(loc, attr, H5P_DEFAULT);
    require_one_value(a, attr);
    const hid_t mem = H5Tcopy(H5T_C_S1);
    H5Tset_size(mem, H5T_VARIABLE);
    H5Tset_cset(mem, H5T_CSET_UTF8);  // as eitstream writes them
    char* p = nullptr;
    std::string out;
    if (H5Aread(a, mem, &p) >= 0 && p) out = p;
    if (p) H5free_memory(p);
    H5Tclose(mem);
    H5Aclose(a);
    return out;
  }
  int64_t int_attr(hid_t loc, const char* attr) const {
    int64_t v = 0;
    if (H5Aexists(loc, attr) <= 0)
      throw std::invalid_argument(fmt::format("{}: /protocol attribute {} missing", name_, attr));
    const hid_t a = H5Aopen(loc, attr, H5P_DEFAULT);
    require_one_value(a, attr);
    H5Aread(a, H5T_NATIVE_INT64, &v);
    H5Aclose(a);
    return v;
  }
  double double_attr(hid_t loc, const char* attr) const {
    double v = 0;
    if (H5Aexists(loc, attr) <= 0) return 0;
    const hid_t a = H5Aopen(loc, attr, H5P_DEFAULT);
    require_one_value(a, attr);
    H5Aread(a, H5T_NATIVE_DOUBLE, &v);
    H5Aclose(a);
    return v;
  }
  void close() noexcept {
    if (dataset_ >= 0) H5Dclose(dataset_);
    if (file_ >= 0) H5Fclose(file_);
    dataset_ = file_ = H5I_INVALID_HID;
  }

  std::string name_;
  hid_t file_ = H5I_INVALID_HID, dataset_ = H5I_INVALID_HID;
  int rank_ = 2;
  size_t width_ = 0;
  std::vector<double> block_;
  size_t block_start_ = 0, block_rows_ = 0;
};

}  // namespace

ReaderPtr open_hdf5_frames(const fs::path& path, const RecordingOptions& o,
                           const recon::Protocol& m) {
  return std::make_unique<Hdf5FramesReader>(path, o, m);
}

}  // namespace eit::acquisition::detail
