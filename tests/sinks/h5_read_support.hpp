#pragma once
// Reads recording files back with the plain HDF5 C API, as any other program would (tests only).
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace eit::test::h5read {

// The HDF5 memory type of T.
template <typename T>
hid_t native() {
  if constexpr (std::is_same_v<T, float>)
    return H5T_NATIVE_FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return H5T_NATIVE_DOUBLE;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return H5T_NATIVE_UINT64;
  else if constexpr (std::is_same_v<T, int64_t>)
    return H5T_NATIVE_INT64;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return H5T_NATIVE_UINT32;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return H5T_NATIVE_UINT8;
  else
    static_assert(sizeof(T) == 0, "h5read::native: no HDF5 type for T");
}

// The whole dataset, flattened row-major, and its shape.
template <typename T>
std::vector<T> dataset(hid_t file, const char* name, std::vector<hsize_t>* shape = nullptr) {
  const hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  if (d < 0) return {};
  const hid_t space = H5Dget_space(d);
  hsize_t dims[4] = {0, 0, 0, 0};
  const int rank = H5Sget_simple_extent_dims(space, dims, nullptr);
  size_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[i];
  if (shape) shape->assign(dims, dims + rank);
  std::vector<T> out(n);
  if (n > 0) H5Dread(d, native<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data());
  H5Sclose(space);
  H5Dclose(d);
  return out;
}

inline std::string attr_string(hid_t loc, const char* name) {
  const hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  if (a < 0) return {};
  const hid_t type = H5Aget_type(a);
  std::string out;
  if (H5Tis_variable_str(type) > 0) {
    char* p = nullptr;
    const hid_t mem = H5Tcopy(H5T_C_S1);
    H5Tset_size(mem, H5T_VARIABLE);
    H5Tset_cset(mem, H5T_CSET_UTF8);
    if (H5Aread(a, mem, &p) >= 0 && p) out = p;
    H5free_memory(p);
    H5Tclose(mem);
  }
  H5Tclose(type);
  H5Aclose(a);
  return out;
}

inline double attr_double(hid_t loc, const char* name) {
  double v = 0;
  const hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  if (a < 0) return -1;
  H5Aread(a, H5T_NATIVE_DOUBLE, &v);
  H5Aclose(a);
  return v;
}

}  // namespace eit::test::h5read
