#pragma once
// Writes one HDF5 attribute for tests that build or edit HDF5 files by hand (a .mat v7.3 file, a
// raw-frame recording, a Model file). The test binary must link HDF5.
#include <hdf5.h>

#include <doctest/doctest.h>

namespace eit::test {

// `count` values of `file_type` from `data` (laid out as `mem_type`); a scalar when count is 1.
inline void write_h5_attribute(hid_t loc, const char* name, hid_t file_type, hid_t mem_type,
                               const void* data, hsize_t count) {
  const hid_t space = count == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr);
  const hid_t a = H5Acreate2(loc, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(a >= 0);
  REQUIRE(H5Awrite(a, mem_type, data) >= 0);
  H5Aclose(a);
  H5Sclose(space);
}

}  // namespace eit::test
