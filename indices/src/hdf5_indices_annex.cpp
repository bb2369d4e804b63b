#include "eit/indices/hdf5_indices_annex.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/hdf5_io.hpp"

namespace eit::indices {

// An extendible [rows × width] dataset and a buffer of `chunk` rows written when full.
struct Hdf5IndicesAnnex::Table {
  hid_t dataset = H5I_INVALID_HID;
  hid_t type = H5I_INVALID_HID;
  size_t width = 1, chunk = 1, element = 8, buffered = 0;
  hsize_t rows = 0;  // written to the file
  std::vector<unsigned char> buffer;

  Table(hid_t group, const char* name, hid_t t, size_t w, size_t chunk_rows,
        const std::string& file)
      : type(t),
        width(w),
        chunk(std::max<size_t>(1, chunk_rows)),
        element(H5Tget_size(t)),
        buffer(chunk * w * element) {
    const hsize_t dims[2] = {0, width}, maxdims[2] = {H5S_UNLIMITED, width},
                  chunk_dims[2] = {chunk, width};
    const int rank = width == 1 ? 1 : 2;
    const hid_t space = H5Screate_simple(rank, dims, maxdims);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, rank, chunk_dims);
    dataset = H5Dcreate2(group, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    if (dataset < 0)
      throw std::runtime_error(fmt::format("{}: cannot create /indices/{}", file, name));
  }
  ~Table() {
    if (dataset >= 0) H5Dclose(dataset);
  }
  // Copies one row in; writes the buffer when it is full. False when that write failed.
  bool push(const void* row) noexcept {
    std::memcpy(buffer.data() + buffered * width * element, row, width * element);
    return ++buffered < chunk || write();
  }
  bool write() noexcept {
    if (buffered == 0) return true;
    const int rank = width == 1 ? 1 : 2;
    const hsize_t total[2] = {rows + buffered, width}, start[2] = {rows, 0},
                  count[2] = {buffered, width};
    bool ok = H5Dset_extent(dataset, total) >= 0;
    const hid_t file_space = ok ? H5Dget_space(dataset) : H5I_INVALID_HID;
    const hid_t mem_space = H5Screate_simple(rank, count, nullptr);
    ok = ok && file_space >= 0 &&
         H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr) >= 0 &&
         H5Dwrite(dataset, type, mem_space, file_space, H5P_DEFAULT, buffer.data()) >= 0;
    if (file_space >= 0) H5Sclose(file_space);
    H5Sclose(mem_space);
    if (ok) {
      rows += buffered;
      H5Dflush(dataset);  // visible to SWMR readers
    }
    buffered = 0;
    return ok;
  }
};

namespace {

template <typename Names>
void string_list(hid_t group, const char* name, const Names& names, const std::string& file) {
  size_t longest = 1;
  for (const auto& n : names) longest = std::max(longest, std::string_view(n).size());
  std::vector<char> data(longest * names.size(), '\0');
  for (size_t i = 0; i < names.size(); ++i)
    std::memcpy(data.data() + i * longest, std::string_view(names[i]).data(),
                std::string_view(names[i]).size());
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, longest);
  const hsize_t dims[1] = {names.size()};
  const hid_t space = H5Screate_simple(1, dims, nullptr);
  const hid_t d = H5Dcreate2(group, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const bool ok = d >= 0 && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0;
  if (d >= 0) H5Dclose(d);
  H5Sclose(space);
  H5Tclose(type);
  if (!ok) throw std::runtime_error(fmt::format("{}: cannot write /indices/{}", file, name));
}

}  // namespace

Hdf5IndicesAnnex::Hdf5IndicesAnnex(IndicesEngine engine, size_t chunk_frames)
    : engine_(std::move(engine)),
      chunk_frames_(chunk_frames),
      breath_row_(kBreathColumns.size()),
      tidal_row_(engine_.layout().n_out()) {}

Hdf5IndicesAnnex::~Hdf5IndicesAnnex() { close(); }

void Hdf5IndicesAnnex::create(int64_t root, const std::string& file) {
  group_ = H5Gcreate2(root, "indices", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (group_ < 0) throw std::runtime_error(fmt::format("{}: cannot create /indices", file));
  // Variable-length UTF-8 strings, as every other attribute of the file.
  recon::h5::write_attr(group_, "format", std::string("eitstream-indices"), file);
  recon::h5::write_attr(group_, "version", int64_t{1}, file);
  recon::h5::write_attr(group_, "frame_rate_hz", engine_.options().rate_hz, file);
  recon::h5::write_attr(group_, "sign", engine_.options().sign, file);
  string_list(group_, "region_names", engine_.layout().region_names(), file);
  string_list(group_, "breath_columns", kBreathColumns, file);
  const size_t n_regions = engine_.layout().n_regions();
  seq_ = std::make_unique<Table>(group_, "seq", H5T_NATIVE_UINT64, 1, chunk_frames_, file);
  regions_ =
      std::make_unique<Table>(group_, "regions", H5T_NATIVE_DOUBLE, n_regions, chunk_frames_, file);
  breaths_ = std::make_unique<Table>(group_, "breaths", H5T_NATIVE_DOUBLE, kBreathColumns.size(),
                                     16, file);
  tidal_ =
      std::make_unique<Table>(group_, "tidal", H5T_NATIVE_FLOAT, engine_.layout().n_out(), 4, file);
}

void Hdf5IndicesAnnex::append(const pipeline::FrameSlot& frame) noexcept {
  if (!seq_ || closed_) return;
  const bool valid = (frame.flags & pipeline::kFlagNonFinite) == 0;
  const BreathIndices* b = engine_.push({frame.image, engine_.layout().n_out()}, frame.seq,
                                        frame.stamp(pipeline::Stage::kReceived), valid);
  if (!seq_->push(&frame.seq)) ++errors_;
  if (!regions_->push(engine_.regions().data())) ++errors_;
  if (b) add_breath(*b);
}

void Hdf5IndicesAnnex::add_breath(const BreathIndices& b) noexcept {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double px = b.pixel_data ? 1.0 : 0.0;
  auto pixel = [&](double v) { return b.pixel_data ? v : nan; };
  const double row[kBreathColumns.size()] = {static_cast<double>(b.number),
                                             static_cast<double>(b.start),
                                             static_cast<double>(b.middle),
                                             static_cast<double>(b.end),
                                             static_cast<double>(b.start_seq),
                                             static_cast<double>(b.middle_seq),
                                             static_cast<double>(b.end_seq),
                                             b.start_s,
                                             b.middle_s,
                                             b.end_s,
                                             b.rate_per_min,
                                             b.inspiration_s,
                                             b.expiration_s,
                                             b.tiv,
                                             b.tiv_expiratory,
                                             b.eeli,
                                             b.eili,
                                             b.eeli_change,
                                             b.eeli_trend_per_min,
                                             px,
                                             pixel(b.cov_vertical),
                                             pixel(b.cov_horizontal),
                                             pixel(b.gi),
                                             pixel(b.rvd_mean),
                                             pixel(b.rvd_sd),
                                             pixel(b.silent_dependent),
                                             pixel(b.silent_nondependent),
                                             static_cast<double>(b.lung_pixels)};
  std::copy(std::begin(row), std::end(row), breath_row_.begin());
  if (!breaths_->push(breath_row_.data())) ++errors_;
  for (size_t i = 0; i < tidal_row_.size(); ++i)
    tidal_row_[i] = b.pixel_data && i < b.tidal.size() ? static_cast<float>(b.tidal[i])
                                                       : std::numeric_limits<float>::quiet_NaN();
  if (!tidal_->push(tidal_row_.data())) ++errors_;
}

void Hdf5IndicesAnnex::flush() noexcept {
  for (Table* t : {seq_.get(), regions_.get(), breaths_.get(), tidal_.get()})
    if (t && !t->write()) ++errors_;
}

void Hdf5IndicesAnnex::close() noexcept {
  if (closed_ || !seq_) return;
  // The breaths the detector still holds (the last, open one) belong in the file too.
  while (const BreathIndices* b = engine_.finish()) add_breath(*b);
  flush();
  closed_ = true;
  seq_.reset();
  regions_.reset();
  breaths_.reset();
  tidal_.reset();
  if (group_ >= 0) H5Gclose(group_);
  group_ = -1;
}

}  // namespace eit::indices
