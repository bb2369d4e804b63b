// Attributes of recon's HDF5 layer (hdf5_io.hpp): scalar strings and numbers, written in the
// types h5py and MATLAB read back, and read with the checks every reader shares (present, one
// value, the expected class, within bounds).
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/hdf5_io.hpp"

namespace eit::recon::h5 {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

Handle open_attr(hid_t loc, const std::string& name, const std::string& where) {
  if (!has_attr(loc, name)) fail(fmt::format("{}: attribute '{}' missing", where, name));
  Handle a(H5Aopen(loc, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!a.valid()) fail(fmt::format("{}: cannot open attribute '{}'", where, name));
  // Every attribute is read into one value, and HDF5 writes all an attribute holds.
  const Handle space(H5Aget_space(a.get()), H5Sclose);
  const hssize_t n = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
  if (n != 1) fail(fmt::format("{}: attribute '{}' holds {} values, expected 1", where, name, n));
  return a;
}

void write_scalar_attr(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type,
                       const void* value, const std::string& file) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(loc, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
  if (!a.valid() || H5Awrite(a.get(), mem_type, value) < 0)
    fail(fmt::format("{}: cannot write attribute '{}'", file, name));
}

}  // namespace

bool has_attr(hid_t loc, const std::string& name) { return H5Aexists(loc, name.c_str()) > 0; }

void write_attr(hid_t loc, const std::string& name, const std::string& value,
                const std::string& file) {
  // Variable-length UTF-8: h5py reads it as str, MATLAB's h5readatt as char.
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  const char* p = value.c_str();
  write_scalar_attr(loc, name, type.get(), type.get(), &p, file);
}
void write_attr(hid_t loc, const std::string& name, int64_t value, const std::string& file) {
  write_scalar_attr(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, file);
}
void write_attr(hid_t loc, const std::string& name, double value, const std::string& file) {
  write_scalar_attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, file);
}

std::string read_attr_string(hid_t loc, const std::string& name, const std::string& where) {
  Handle a = open_attr(loc, name, where);
  Handle type(H5Aget_type(a.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING)
    fail(fmt::format("{}: attribute '{}' is not a string", where, name));
  if (H5Tis_variable_str(type.get()) > 0) {
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    char* p = nullptr;
    if (H5Aread(a.get(), mem.get(), &p) < 0)
      fail(fmt::format("{}: cannot read attribute '{}'", where, name));
    std::string out = p ? p : "";
    H5free_memory(p);
    return out;
  }
  const size_t size = H5Tget_size(type.get());
  std::string out(size, '\0');
  if (H5Aread(a.get(), type.get(), out.data()) < 0)
    fail(fmt::format("{}: cannot read attribute '{}'", where, name));
  out.resize(out.find('\0') == std::string::npos ? size : out.find('\0'));
  return out;
}

int64_t read_attr_int(hid_t loc, const std::string& name, const std::string& where) {
  Handle a = open_attr(loc, name, where);
  Handle type(H5Aget_type(a.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_INTEGER)
    fail(fmt::format("{}: attribute '{}' is not an integer", where, name));
  int64_t v = 0;
  if (H5Aread(a.get(), H5T_NATIVE_INT64, &v) < 0)
    fail(fmt::format("{}: cannot read attribute '{}'", where, name));
  return v;
}

int64_t read_attr_int_in(hid_t loc, const std::string& name, int64_t lo, int64_t hi,
                         const std::string& where) {
  const int64_t v = read_attr_int(loc, name, where);
  if (v < lo || v > hi)
    fail(fmt::format("{}: attribute '{}' is {}, expected {} to {}", where, name, v, lo, hi));
  return v;
}

double read_attr_double(hid_t loc, const std::string& name, const std::string& where) {
  Handle a = open_attr(loc, name, where);
  Handle type(H5Aget_type(a.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    fail(fmt::format("{}: attribute '{}' is not a number", where, name));
  double v = 0;
  if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, &v) < 0)
    fail(fmt::format("{}: cannot read attribute '{}'", where, name));
  return v;
}

double read_attr_finite_from(hid_t loc, const std::string& name, double lo,
                             const std::string& where) {
  const double v = read_attr_double(loc, name, where);
  if (!std::isfinite(v) || v < lo)
    fail(
        fmt::format("{}: attribute '{}' is {}, expected a finite number ≥ {}", where, name, v, lo));
  return v;
}

}  // namespace eit::recon::h5
