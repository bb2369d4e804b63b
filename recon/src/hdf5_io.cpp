#include "eit/recon/hdf5_io.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace eit::recon::h5 {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

// Datasets of at least kChunkFrom bytes are chunked along their first dimension in chunks of
// about kChunkBytes (whole rows), so h5py/MATLAB can read row blocks of a 0.7 GB H and a full read
// still moves whole chunks straight into the caller's buffer (chunks exceed HDF5's 1 MiB chunk
// cache, and no filter runs). Smaller datasets stay contiguous. No compression: H's float32
// values barely compress and deflate would cost seconds per load (docs/benchmarks.md).
constexpr hsize_t kChunkFrom = hsize_t{1} << 20;
constexpr hsize_t kChunkBytes = hsize_t{4} << 20;

Handle dataset_creation(const std::vector<hsize_t>& dims, size_t value_size,
                        const std::string& file, const std::string& name) {
  Handle plist(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!plist.valid()) fail(fmt::format("{}: cannot create a property list for {}", file, name));
  hsize_t row = value_size, n = value_size;
  for (size_t i = 0; i < dims.size(); ++i) {
    n *= dims[i];
    if (i > 0) row *= dims[i];
  }
  if (dims.empty() || n < kChunkFrom || dims[0] == 0) return plist;
  std::vector<hsize_t> chunk = dims;
  chunk[0] = std::clamp<hsize_t>(kChunkBytes / std::max<hsize_t>(row, 1), 1, dims[0]);
  if (H5Pset_chunk(plist.get(), static_cast<int>(chunk.size()), chunk.data()) < 0)
    fail(fmt::format("{}: cannot set the chunk shape of {}", file, name));
  return plist;
}

void write_any(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type,
               const void* data, const std::vector<hsize_t>& dims, const std::string& file) {
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  if (!space.valid()) fail(fmt::format("{}: cannot create dataspace for {}", file, name));
  const Handle plist = dataset_creation(dims, H5Tget_size(file_type), file, name);
  Handle set(
      H5Dcreate2(loc, name.c_str(), file_type, space.get(), H5P_DEFAULT, plist.get(), H5P_DEFAULT),
      H5Dclose);
  if (!set.valid()) fail(fmt::format("{}: cannot create dataset {}", file, name));
  hsize_t n = 1;
  for (hsize_t d : dims) n *= d;
  if (n > 0 && H5Dwrite(set.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    fail(fmt::format("{}: cannot write dataset {}", file, name));
}

// A dataset may claim at most 1032 bytes of values per byte of its file: deflate's largest
// ratio, and no filter eitstream or h5py writes packs more. Values never written (fill values)
// cost nothing whatever extent is declared, and the readers allocate that extent: a 12 KB Model
// file declaring H as 2^28 × 3 made load_model allocate and fill 3.2 GB before refusing it.
constexpr hsize_t kMaxInflation = 1032;

void check_claimed_size(hid_t set, hssize_t n, const std::string& where) {
  const Handle type(H5Dget_type(set), H5Tclose);
  const size_t value_size = type.valid() ? H5Tget_size(type.get()) : 0;
  const Handle file(H5Iget_file_id(set), H5Fclose);
  hsize_t file_size = 0;
  if (!file.valid() || H5Fget_filesize(file.get(), &file_size) < 0)
    fail(fmt::format("{}: cannot read the size of its file", where));
  const auto claimed = static_cast<unsigned __int128>(n) * std::max<size_t>(value_size, 1);
  if (claimed > static_cast<unsigned __int128>(file_size) * kMaxInflation)
    fail(fmt::format("{}: {} values of {} bytes, more than the {}-byte file can hold", where, n,
                     value_size, file_size));
}

// Opens dataset `name` and checks that it holds integers or floats and, when expected_count is
// given, exactly that many values (the count is checked first).
struct NumericDataset {
  Handle set;
  size_t count = 0;  // number of values
};
NumericDataset open_numeric_dataset(hid_t loc, const std::string& name, const std::string& where,
                                    std::optional<size_t> expected_count) {
  NumericDataset d{open_dataset(loc, name, where)};
  Handle space(H5Dget_space(d.set.get()), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) fail(fmt::format("{}: cannot read its shape", where));
  check_claimed_size(d.set.get(), n, where);
  if (expected_count && static_cast<size_t>(n) != *expected_count)
    fail(fmt::format("{}: {} values, expected {}", where, n, *expected_count));
  Handle type(H5Dget_type(d.set.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_INTEGER && cls != H5T_FLOAT)
    fail(fmt::format("{}: not a numeric dataset, expected integers or floats", where));
  d.count = static_cast<size_t>(n);
  return d;
}

// Reads all of d's values, converted to mem_type, into out[0, d.count).
void read_values(const NumericDataset& d, hid_t mem_type, void* out, const std::string& where) {
  if (d.count > 0 && H5Dread(d.set.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
    fail(fmt::format("{}: cannot read dataset", where));
}

template <typename T>
std::vector<T> read_any(hid_t loc, const std::string& name, hid_t mem_type,
                        const std::string& where) {
  const NumericDataset d = open_numeric_dataset(loc, name, where, std::nullopt);
  std::vector<T> out(d.count);
  read_values(d, mem_type, out.data(), where);
  return out;
}

}  // namespace

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    if (valid() && close_) close_(id_);
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = H5I_INVALID_HID;
  }
  return *this;
}

Handle::~Handle() {
  if (valid() && close_) close_(id_);
}

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

std::string error_reason() {
  struct Found {
    std::string system, innermost;
  } found;
  // Upward: the innermost error (where it happened) first, the API call last.
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        auto& f = *static_cast<Found*>(data);
        const std::string_view desc = e->desc != nullptr ? e->desc : "";
        if (f.innermost.empty()) f.innermost = desc;
        // The POSIX drivers (sec2, core) say "…, errno = 28, error message = 'No space left
        // on device', …" when a system call failed.
        constexpr std::string_view key = "error message = '";
        if (const size_t at = desc.find(key); f.system.empty() && at != desc.npos) {
          const size_t from = at + key.size(), to = desc.find('\'', from);
          f.system = desc.substr(from, to == desc.npos ? desc.npos : to - from);
        }
        return 0;
      },
      &found);
  return !found.system.empty() ? found.system : found.innermost;
}

Handle create_file(const std::string& path) {
  Handle f(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) fail(fmt::format("{}: cannot create HDF5 file", path));
  return f;
}

Handle create_group(hid_t loc, const std::string& name, const std::string& file) {
  Handle g(H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.valid()) fail(fmt::format("{}: cannot create group {}", file, name));
  return g;
}

void write_float32(hid_t loc, const std::string& name, const float* data,
                   const std::vector<hsize_t>& dims, const std::string& file) {
  write_any(loc, name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, data, dims, file);
}
void write_float64(hid_t loc, const std::string& name, const double* data,
                   const std::vector<hsize_t>& dims, const std::string& file) {
  write_any(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, data, dims, file);
}
void write_int32(hid_t loc, const std::string& name, const int32_t* data,
                 const std::vector<hsize_t>& dims, const std::string& file) {
  write_any(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, data, dims, file);
}
void write_uint8(hid_t loc, const std::string& name, const uint8_t* data,
                 const std::vector<hsize_t>& dims, const std::string& file) {
  write_any(loc, name, H5T_STD_U8LE, H5T_NATIVE_UINT8, data, dims, file);
}

Handle open_file(const std::string& path) {
  if (H5Fis_hdf5(path.c_str()) <= 0) fail(fmt::format("{}: not an HDF5 file", path));
  std::string reason;
  {
    const QuietErrors quiet;
    Handle f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (f.valid()) return f;
    reason = error_reason();
    // A recording still being written, or whose writer was killed, is marked open for SWMR
    // writing: a plain open refuses it, a SWMR read opens it (the rows written so far).
    Handle swmr(H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT), H5Fclose);
    if (swmr.valid()) return swmr;
  }
  fail(fmt::format("{}: cannot open HDF5 file{}", path, reason.empty() ? "" : ": " + reason));
}

Handle open_group(hid_t loc, const std::string& name, const std::string& where) {
  if (!exists(loc, name)) fail(fmt::format("{}: group missing", where));
  Handle g(H5Gopen2(loc, name.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.valid()) fail(fmt::format("{}: cannot open group", where));
  return g;
}

bool exists(hid_t loc, const std::string& name) {
  return H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0;
}

std::vector<hsize_t> dataset_shape(hid_t loc, const std::string& name, const std::string& where) {
  const Handle set = open_dataset(loc, name, where);
  Handle space(H5Dget_space(set.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail(fmt::format("{}: cannot read its shape", where));
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  // Callers size buffers by the shape before reading (H straight into the model's matrix).
  check_claimed_size(set.get(), H5Sget_simple_extent_npoints(space.get()), where);
  return dims;
}

void read_float32_into(hid_t loc, const std::string& name, float* out, size_t count,
                       const std::string& where) {
  read_values(open_numeric_dataset(loc, name, where, count), H5T_NATIVE_FLOAT, out, where);
}

std::string dataset_layout(hid_t loc, const std::string& name, const std::string& where) {
  if (!exists(loc, name)) fail(fmt::format("{}: dataset missing", where));
  Handle set(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
  Handle plist(set.valid() ? H5Dget_create_plist(set.get()) : H5I_INVALID_HID, H5Pclose);
  if (!plist.valid()) fail(fmt::format("{}: cannot read its layout", where));
  switch (H5Pget_layout(plist.get())) {
    case H5D_CONTIGUOUS:
      return "contiguous";
    case H5D_COMPACT:
      return "compact";
    case H5D_CHUNKED: {
      hsize_t chunk[8] = {};
      const int rank = H5Pget_chunk(plist.get(), 8, chunk);
      std::string s = "chunked ";
      for (int i = 0; i < rank; ++i) s += fmt::format("{}{}", i ? " × " : "", chunk[i]);
      const int filters = H5Pget_nfilters(plist.get());
      if (filters > 0) s += fmt::format(", {} filter{}", filters, filters == 1 ? "" : "s");
      return s;
    }
    default:
      return "other";
  }
}

Handle open_dataset(hid_t loc, const std::string& name, const std::string& where) {
  if (!exists(loc, name)) fail(fmt::format("{}: dataset missing", where));
  Handle set(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!set.valid()) fail(fmt::format("{}: cannot open dataset", where));
  return set;
}

std::vector<float> read_float32(hid_t loc, const std::string& name, const std::string& where) {
  return read_any<float>(loc, name, H5T_NATIVE_FLOAT, where);
}
std::vector<double> read_float64(hid_t loc, const std::string& name, const std::string& where) {
  return read_any<double>(loc, name, H5T_NATIVE_DOUBLE, where);
}
std::vector<int32_t> read_int32(hid_t loc, const std::string& name, const std::string& where) {
  return read_any<int32_t>(loc, name, H5T_NATIVE_INT32, where);
}
std::vector<uint8_t> read_uint8(hid_t loc, const std::string& name, const std::string& where) {
  return read_any<uint8_t>(loc, name, H5T_NATIVE_UINT8, where);
}
std::vector<uint32_t> read_uint32(hid_t loc, const std::string& name, const std::string& where) {
  return read_any<uint32_t>(loc, name, H5T_NATIVE_UINT32, where);
}
std::vector<int64_t> read_int64(hid_t loc, const std::string& name, const std::string& where) {
  return read_any<int64_t>(loc, name, H5T_NATIVE_INT64, where);
}
std::vector<uint64_t> read_uint64(hid_t loc, const std::string& name, const std::string& where) {
  return read_any<uint64_t>(loc, name, H5T_NATIVE_UINT64, where);
}

std::string shape_text(const std::vector<hsize_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += fmt::format("{}{}", i ? " × " : "", dims[i]);
  return dims.empty() ? "scalar" : s;
}

std::vector<hsize_t> expect_shape(hid_t loc, const std::string& name, const std::string& where,
                                  const std::vector<hsize_t>& expected, const std::string& why) {
  const auto dims = dataset_shape(loc, name, where);
  bool ok = dims.size() == expected.size();
  for (size_t i = 0; ok && i < dims.size(); ++i) ok = expected[i] == 0 || expected[i] == dims[i];
  if (!ok) {
    std::vector<std::string> parts;
    for (hsize_t e : expected) parts.push_back(e ? std::to_string(e) : "any");
    throw std::runtime_error(fmt::format("{}: shape {}, expected {} ({})", where, shape_text(dims),
                                         fmt::join(parts, " × "), why));
  }
  return dims;
}

}  // namespace eit::recon::h5
