#pragma once
// Small RAII layer over the HDF5 C API: the one place eitstream reads and writes HDF5 datasets and
// attributes for the Model file (recon), raw-frame recordings (acquisition) and image files
// (`eitstream indices`). Every failure throws std::runtime_error naming the file and the dataset
// or attribute. Readers check what they read into fixed places: an attribute must hold one value
// of the class asked for (a string, an integer, a number), so a forged or foreign file is refused
// with its reason instead of overrunning a buffer or being read as 0. Callers link HDF5 and see
// its include directory.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace eit::recon::h5 {

// Owns one HDF5 identifier and closes it with the matching H5*close.
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle();
  hid_t get() const noexcept { return id_; }
  bool valid() const noexcept { return id_ >= 0; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  herr_t (*close_)(hid_t) = nullptr;
};

// Silences HDF5's error printing for the lifetime of the object, restoring it afterwards.
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// Why the last HDF5 call on this thread failed, from its error stack: the operating system's
// message where the file driver reports one ("No space left on device"), else the innermost
// description HDF5 gave; "" when the stack is empty. Call it before the next HDF5 call.
std::string error_reason();

// Writing. `dims` gives the dataset shape (row-major); data holds the product of dims values.
// Datasets of 1 MiB or more are chunked along dims[0] (about 4 MiB per chunk, whole rows).
Handle create_file(const std::string& path);
Handle create_group(hid_t loc, const std::string& name, const std::string& file);
void write_float32(hid_t loc, const std::string& name, const float* data,
                   const std::vector<hsize_t>& dims, const std::string& file);
void write_float64(hid_t loc, const std::string& name, const double* data,
                   const std::vector<hsize_t>& dims, const std::string& file);
void write_int32(hid_t loc, const std::string& name, const int32_t* data,
                 const std::vector<hsize_t>& dims, const std::string& file);
void write_uint8(hid_t loc, const std::string& name, const uint8_t* data,
                 const std::vector<hsize_t>& dims, const std::string& file);
void write_attr(hid_t loc, const std::string& name, const std::string& value,
                const std::string& file);
void write_attr(hid_t loc, const std::string& name, int64_t value, const std::string& file);
void write_attr(hid_t loc, const std::string& name, double value, const std::string& file);

// Reading. `where` names the object in messages, e.g. "model.h5: /protocol/drives". A dataset
// whose shape claims more than 1032 bytes of values per byte of its file (deflate's largest
// ratio) is refused by dataset_shape, expect_shape and the read_* functions before anything is
// allocated: unwritten values cost no file space whatever extent is declared.
Handle open_file(const std::string& path);
Handle open_group(hid_t loc, const std::string& name, const std::string& where);
bool exists(hid_t loc, const std::string& name);
bool has_attr(hid_t loc, const std::string& name);
Handle open_dataset(hid_t loc, const std::string& name, const std::string& where);
// "contiguous", "compact" or "chunked 1129 × 928" (plus ", N filters" when filtered).
std::string dataset_layout(hid_t loc, const std::string& name, const std::string& where);
std::vector<hsize_t> dataset_shape(hid_t loc, const std::string& name, const std::string& where);
// "12 × 3" ("scalar" for no dimensions).
std::string shape_text(const std::vector<hsize_t>& dims);
// The dataset's shape when it is exactly `expected` (a 0 entry matches any length); throws naming
// where, the shape found and the one expected (`why` says what the dimensions are) otherwise.
std::vector<hsize_t> expect_shape(hid_t loc, const std::string& name, const std::string& where,
                                  const std::vector<hsize_t>& expected, const std::string& why);
// Reads the whole dataset converted to the requested type (HDF5 converts numeric types).
std::vector<float> read_float32(hid_t loc, const std::string& name, const std::string& where);
// Straight into the caller's buffer (no second copy of a large H); count = the dataset's size.
void read_float32_into(hid_t loc, const std::string& name, float* out, size_t count,
                       const std::string& where);
std::vector<double> read_float64(hid_t loc, const std::string& name, const std::string& where);
std::vector<int32_t> read_int32(hid_t loc, const std::string& name, const std::string& where);
std::vector<uint8_t> read_uint8(hid_t loc, const std::string& name, const std::string& where);
std::vector<uint32_t> read_uint32(hid_t loc, const std::string& name, const std::string& where);
std::vector<int64_t> read_int64(hid_t loc, const std::string& name, const std::string& where);
std::vector<uint64_t> read_uint64(hid_t loc, const std::string& name, const std::string& where);
// Attributes: each must exist and hold one value. read_attr_string takes fixed- and
// variable-length strings; read_attr_int integers only (a float 1.5 is refused, not truncated);
// read_attr_double integers or floats.
std::string read_attr_string(hid_t loc, const std::string& name, const std::string& where);
int64_t read_attr_int(hid_t loc, const std::string& name, const std::string& where);
// An integer attribute within [lo, hi]: one that would not fit where it goes (an int, a size) is
// refused naming it and the range, instead of wrapping into a plausible value.
int64_t read_attr_int_in(hid_t loc, const std::string& name, int64_t lo, int64_t hi,
                         const std::string& where);
double read_attr_double(hid_t loc, const std::string& name, const std::string& where);
// A finite number attribute ≥ lo: a frame rate of -1, NaN or infinity would otherwise pass for
// "unknown" in one place and be divided by in another.
double read_attr_finite_from(hid_t loc, const std::string& name, double lo,
                             const std::string& where);

}  // namespace eit::recon::h5
