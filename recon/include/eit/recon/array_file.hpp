#pragma once
// Reading numeric arrays from NumPy .npy files (own reader) and MATLAB .mat files (libmatio, when
// built with it: EIT_HAVE_MATIO). Set-up only: allocates, throws std::runtime_error naming the
// file, the variable or header field, what was found and what was expected.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace eit::recon {

// An n-dimensional array, values converted to double, stored in C (row-major) order.
struct DenseArray {
  std::vector<size_t> shape;
  std::vector<double> real;
  std::vector<double> imag;  // empty unless the source is complex

  size_t size() const noexcept { return real.size(); }
  bool is_complex() const noexcept { return !imag.empty(); }
};

// .npy versions 1.0–3.0; dtypes float32/float64/int8–int64/uint8–uint64/complex64/complex128,
// either byte order, C or Fortran order.
DenseArray read_npy(const std::filesystem::path& path);

// A numeric variable of a MATLAB .mat file (v5, v7, v7.3). An empty name picks the only numeric
// variable (an error listing the names when there are several).
DenseArray read_mat_variable(const std::filesystem::path& path, const std::string& name = "");

// True when this build reads .mat files.
bool mat_reader_available() noexcept;

}  // namespace eit::recon
