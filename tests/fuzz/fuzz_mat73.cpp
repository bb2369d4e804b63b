// libFuzzer target: the MATLAB v7.3 path of the hardened .mat reader (mat73_check, then
// libmatio) through recon's read_mat_variable and acquisition's .mat recording reader, on
// well-formed HDF5 files with a v7.3 header whose content the input decides (fuzzed_hdf5.hpp):
// variables as MATLAB writes them (a numeric dataset, an empty array, a struct, a sparse matrix)
// with their MATLAB_class, MATLAB_empty, MATLAB_global, MATLAB_int_decode, MATLAB_sparse and
// (structs) MATLAB_fields attributes, each kept, left out or given another type, shape or values.
// What must hold: a matrix read is 2-D with as many values as its shape says, and an unchanged
// variable `v` reads back the values written; the recording reader's frames read the same twice.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

#include <H5Epublic.h>

#include "eit/recon/array_file.hpp"
#include "fuzz_support.hpp"
#include "fuzzed_hdf5.hpp"

namespace {

using eit::fuzz::FuzzedHdf5;
using eit::fuzz::H5Value;
namespace h5 = eit::recon::h5;

// `v`: 208 × 2 doubles (a frame of 16 electrodes' 208 measurements per column), stored as MATLAB
// does, column-major, so as an HDF5 2 × 208 dataset.
constexpr hsize_t kRows = 208, kCols = 2;
double value(size_t i) { return 0.5 * double(i) - 7.0; }

// Writes one variable; true when it is `v`'s numeric matrix exactly as valid.
bool write_variable(FuzzedHdf5& f, hid_t root, const std::string& name, bool is_v) {
  FuzzedDataProvider& in = f.input();
  const int kind = in.ConsumeIntegralInRange(0, 3);  // numeric, empty, struct, sparse
  bool valid = kind == 0;
  if (kind == 0) {
    std::vector<double> data(is_v ? kRows * kCols : 6);
    for (size_t i = 0; i < data.size(); ++i) data[i] = value(i);
    valid &= f.dataset(
        root, name.c_str(),
        H5Value::array(H5Value::kF64,
                       is_v ? std::vector<hsize_t>{kCols, kRows} : std::vector<hsize_t>{3, 2},
                       data));
  } else if (kind == 1) {  // MATLAB's empty array: its dimensions as data
    f.dataset(root, name.c_str(), H5Value::array(H5Value::kU64, {2}, {0, 0}));
  } else {
    const h5::Handle g = f.group(root, name.c_str());
    if (!g.valid()) return false;
    if (kind == 2) {
      f.dataset(g.get(), "a", H5Value::array(H5Value::kF64, {1, 1}, {1.5}));
      f.attribute(g.get(), "MATLAB_fields", {H5Value::kVlenBytes, {1}, {}, "a"});
    } else {  // 3 × 2 with 2 non-zeros: values, row indices, column starts
      f.dataset(g.get(), "data", H5Value::array(H5Value::kF64, {2}, {1.0, 2.0}));
      f.dataset(g.get(), "ir", H5Value::array(H5Value::kU64, {2}, {0, 2}));
      f.dataset(g.get(), "jc", H5Value::array(H5Value::kU64, {3}, {0, 1, 2}));
    }
  }
  const h5::Handle object(H5Oopen(root, name.c_str(), H5P_DEFAULT), H5Oclose);
  if (!object.valid()) return false;
  valid &= f.attribute(object.get(), "MATLAB_class",
                       H5Value::string(kind == 2 ? "struct" : "double", H5Value::kFixedStr));
  valid &=
      f.optional_attribute(object.get(), "MATLAB_empty", H5Value::integer(kind == 1, H5Value::kU8));
  valid &= f.optional_attribute(object.get(), "MATLAB_global", H5Value::integer(1, H5Value::kU8));
  valid &=
      f.optional_attribute(object.get(), "MATLAB_int_decode", H5Value::integer(2, H5Value::kI32));
  valid &= f.optional_attribute(object.get(), "MATLAB_sparse",
                                H5Value::integer(kind == 3 ? 3 : 0, H5Value::kU64));
  return valid && is_v;
}

// Writes the file; true when `v` is there as valid.
bool write_mat73(FuzzedDataProvider& in, const std::string& path) {
  FuzzedHdf5 f(in, {"double", "single", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                    "int64", "uint64", "char", "logical", "cell", "struct", "sparse",
                    "function_handle", "canonical empty", ""});
  const h5::Handle fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
  H5Pset_userblock(fcpl.get(), 512);  // MATLAB's 128-byte header lives in it
  bool v_valid = false;
  {
    const h5::Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), H5P_DEFAULT),
                          H5Fclose);
    if (!file.valid()) std::abort();
    const int extra = in.ConsumeIntegralInRange(0, 2);
    v_valid = write_variable(f, file.get(), "v", true);
    for (int i = 0; i < extra; ++i) {
      const char* names[] = {"h", "x", "#refs#", "v_rotate"};
      write_variable(f, file.get(), in.PickValueInArray(names), false);
    }
  }
  std::string header = "MATLAB 7.3 MAT-file, Platform: GLNXA64, eitstream fuzz. HDF5 schema 1.00 .";
  header.resize(116, ' ');
  header += std::string(8, '\0') + std::string("\x00\x02IM", 4);
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0 || ::pwrite(fd, header.data(), header.size(), 0) != ssize_t(header.size()))
    std::abort();
  ::close(fd);
  return v_valid;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static eit::fuzz::InputFile file("fuzz.mat");
  static const bool quiet = [] { return H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0; }();
  (void)quiet;
  FuzzedDataProvider in(data, size);
  const std::string path = file.path().string();
  const bool v_valid = write_mat73(in, path);
  for (const char* name : {"", "v"}) {
    try {
      const eit::recon::DenseArray a = eit::recon::read_mat_variable(path, name);
      if (a.shape.size() != 2 || a.shape[0] * a.shape[1] != a.size()) std::abort();
      if (v_valid && *name) {  // MATLAB's 208 × 2, row-major here: (r, c) is HDF5's (c, r)
        if (a.shape[0] != kRows || a.shape[1] != kCols || a.is_complex()) std::abort();
        for (size_t r = 0; r < kRows; ++r)
          for (size_t c = 0; c < kCols; ++c)
            if (a.real[r * kCols + c] != value(c * kRows + r)) std::abort();
      }
    } catch (const std::exception&) {
    }
  }
  eit::fuzz::open_and_read_all(path, "mat", eit::fuzz::protocol(),
                               std::filesystem::file_size(path));
  return 0;
}
