// libFuzzer target: the MATLAB v7.3 path of the hardened .mat reader (mat73_check, then
// libmatio) through recon's read_mat_variable and acquisition's .mat recording reader, on
// well-formed HDF5 files with a v7.3 header whose content the input decides (fuzzed_hdf5.hpp):
// variables as MATLAB writes them (a numeric dataset, an empty array, a struct, a sparse matrix,
// a cell) with their MATLAB_class, MATLAB_empty, MATLAB_global, MATLAB_int_decode, MATLAB_sparse
// and (structs) MATLAB_fields attributes, each kept, left out or given another type, shape or
// values. A cell's references may point at a valid element in /#refs#, at the cell itself, at a
// group or variable holding it, at a deleted object or past the end of the file (write_cell).
// What must hold: a matrix read is 2-D with as many values as its shape says, an unchanged
// variable `v` reads back the values written, a cell `v` is never read as a matrix; the
// recording reader's frames read the same twice.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include <H5Epublic.h>
#include <H5Rpublic.h>
#include <fmt/format.h>

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

enum Kind { kNumeric, kEmpty, kStruct, kSparse, kCell };

// The group MATLAB keeps cell elements in, created on first use; invalid when a variable of
// that name is not a group.
h5::Handle refs_group(hid_t root) {
  if (H5Lexists(root, "#refs#", H5P_DEFAULT) <= 0)
    return h5::Handle(H5Gcreate2(root, "#refs#", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  return h5::Handle(H5Gopen2(root, "#refs#", H5P_DEFAULT), H5Gclose);  // fails on a dataset
}

// A name not yet used in /#refs#.
std::string new_element(hid_t refs) {
  H5G_info_t info{};
  H5Gget_info(refs, &info);
  return fmt::format("e{}", info.nlinks);
}

hobj_ref_t reference_to(hid_t file, const std::string& path) {
  hobj_ref_t r = HADDR_UNDEF;
  H5Rcreate(&r, file, path.c_str(), H5R_OBJECT, -1);
  return r;
}

// A cell as MATLAB writes it: a dataset of object references, HDF5 shape {1, n} for MATLAB's
// n × 1, each pointing at an element in /#refs# (a 1 × 1 double with its MATLAB_class, both
// fuzzed). The input decides the shape (or a huge declared extent, nothing written) and what
// each reference points at instead.
void write_cell(FuzzedHdf5& f, hid_t root, const std::string& name) {
  FuzzedDataProvider& in = f.input();
  const h5::Handle refs = refs_group(root);
  const hsize_t n = in.ConsumeIntegralInRange(0, 4);
  std::vector<hsize_t> dims{1, n};
  const int shape = in.ConsumeIntegral<uint8_t>() % 6;
  if (shape == 1) dims = {n};
  if (shape == 2) dims = {};
  if (shape == 3) dims = {1, hsize_t{1} << in.ConsumeIntegralInRange(10, 40)};
  const h5::Handle space(dims.empty() ? H5Screate(H5S_SCALAR)
                                      : H5Screate_simple(int(dims.size()), dims.data(), nullptr),
                         H5Sclose);
  const h5::Handle cell(H5Dcreate2(root, name.c_str(), H5T_STD_REF_OBJ, space.get(), H5P_DEFAULT,
                                   H5P_DEFAULT, H5P_DEFAULT),
                        H5Dclose);
  if (!cell.valid() || shape == 3) return;
  const std::string self = "/" + name;
  std::vector<hobj_ref_t> r(dims.empty() ? 1 : n);
  for (hobj_ref_t& ref : r) {
    const int target = in.ConsumeIntegral<uint8_t>() % 9;
    if (target == 0 && refs.valid()) {  // a valid element
      const std::string e = new_element(refs.get());
      f.dataset(refs.get(), e.c_str(), H5Value::array(H5Value::kF64, {1, 1}, {2.5}));
      const h5::Handle o(H5Oopen(refs.get(), e.c_str(), H5P_DEFAULT), H5Oclose);
      if (o.valid())
        f.attribute(o.get(), "MATLAB_class", H5Value::string("double", H5Value::kFixedStr));
      ref = reference_to(root, "/#refs#/" + e);
    } else if (target == 1) {  // itself
      ref = reference_to(root, self);
    } else if (target == 2) {  // the root group, which holds it
      ref = reference_to(root, "/");
    } else if (target == 3 && refs.valid()) {
      ref = reference_to(root, "/#refs#");
    } else if (target == 4) {  // the variable v (this cell when it is v)
      ref = reference_to(root, "/v");
    } else if (target == 5 && refs.valid()) {  // an object deleted since
      const std::string e = new_element(refs.get());
      f.dataset(refs.get(), e.c_str(), H5Value::array(H5Value::kF64, {1, 1}, {2.5}));
      ref = reference_to(root, "/#refs#/" + e);
      H5Ldelete(refs.get(), e.c_str(), H5P_DEFAULT);
    } else if (target == 6) {  // past the end of the file, or HDF5's undefined address
      ref = in.ConsumeBool() ? hobj_ref_t{1} << 40 : HADDR_UNDEF;
    } else if (target == 7 && refs.valid()) {  // a cell in /#refs# pointing back at this one
      const std::string e = new_element(refs.get());
      const hsize_t one[2] = {1, 1};
      const h5::Handle s1(H5Screate_simple(2, one, nullptr), H5Sclose);
      const h5::Handle inner(H5Dcreate2(refs.get(), e.c_str(), H5T_STD_REF_OBJ, s1.get(),
                                        H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                             H5Dclose);
      const hobj_ref_t back = reference_to(root, self);
      if (inner.valid()) {
        H5Dwrite(inner.get(), H5T_STD_REF_OBJ, H5S_ALL, H5S_ALL, H5P_DEFAULT, &back);
        f.attribute(inner.get(), "MATLAB_class", H5Value::string("cell", H5Value::kFixedStr));
      }
      ref = reference_to(root, "/#refs#/" + e);
    } else {  // never written: the fill value
      ref = 0;
    }
  }
  if (!r.empty()) H5Dwrite(cell.get(), H5T_STD_REF_OBJ, H5S_ALL, H5S_ALL, H5P_DEFAULT, r.data());
}

// Writes one variable; true when it is `v`'s numeric matrix exactly as valid. cell: set when it
// wrote a cell whose MATLAB_class says so.
bool write_variable(FuzzedHdf5& f, hid_t root, const std::string& name, bool is_v, bool& cell) {
  FuzzedDataProvider& in = f.input();
  const auto kind = Kind(in.ConsumeIntegralInRange(0, 4));
  bool valid = kind == kNumeric;
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
  } else if (kind == kCell) {
    write_cell(f, root, name);
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
  const char* matlab_class = kind == kStruct ? "struct" : kind == kCell ? "cell" : "double";
  const bool class_valid =
      f.attribute(object.get(), "MATLAB_class", H5Value::string(matlab_class, H5Value::kFixedStr));
  valid &= class_valid;
  cell = kind == kCell && class_valid;
  valid &=
      f.optional_attribute(object.get(), "MATLAB_empty", H5Value::integer(kind == 1, H5Value::kU8));
  valid &= f.optional_attribute(object.get(), "MATLAB_global", H5Value::integer(1, H5Value::kU8));
  valid &=
      f.optional_attribute(object.get(), "MATLAB_int_decode", H5Value::integer(2, H5Value::kI32));
  valid &= f.optional_attribute(object.get(), "MATLAB_sparse",
                                H5Value::integer(kind == 3 ? 3 : 0, H5Value::kU64));
  return valid && is_v;
}

struct Written {
  bool v_valid = false;  // v is the numeric matrix as valid
  bool v_cell = false;   // v is a dataset whose MATLAB_class says "cell"
};

Written write_mat73(FuzzedDataProvider& in, const std::string& path) {
  FuzzedHdf5 f(in, {"double", "single", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                    "int64", "uint64", "char", "logical", "cell", "struct", "sparse",
                    "function_handle", "canonical empty", ""});
  const h5::Handle fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
  H5Pset_userblock(fcpl.get(), 512);  // MATLAB's 128-byte header lives in it
  Written w;
  {
    const h5::Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), H5P_DEFAULT),
                          H5Fclose);
    if (!file.valid()) std::abort();
    const int extra = in.ConsumeIntegralInRange(0, 2);
    w.v_valid = write_variable(f, file.get(), "v", true, w.v_cell);
    for (int i = 0; i < extra; ++i) {
      const char* names[] = {"h", "x", "#refs#", "v_rotate"};
      bool cell = false;
      write_variable(f, file.get(), in.PickValueInArray(names), false, cell);
    }
  }
  std::string header = "MATLAB 7.3 MAT-file, Platform: GLNXA64, eitstream fuzz. HDF5 schema 1.00 .";
  header.resize(116, ' ');
  header += std::string(8, '\0') + std::string("\x00\x02IM", 4);
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0 || ::pwrite(fd, header.data(), header.size(), 0) != ssize_t(header.size()))
    std::abort();
  ::close(fd);
  return w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static eit::fuzz::InputFile file("fuzz.mat");
  static const bool quiet = [] { return H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0; }();
  (void)quiet;
  FuzzedDataProvider in(data, size);
  const std::string path = file.path().string();
  const Written w = write_mat73(in, path);
  for (const char* name : {"", "v"}) {
    try {
      const eit::recon::DenseArray a = eit::recon::read_mat_variable(path, name);
      if (a.shape.size() != 2 || a.shape[0] * a.shape[1] != a.size()) std::abort();
      if (w.v_cell && *name) std::abort();  // a cell is not a matrix
      if (w.v_valid && *name) {  // MATLAB's 208 × 2, row-major here: (r, c) is HDF5's (c, r)
        if (a.shape[0] != kRows || a.shape[1] != kCols || a.is_complex()) std::abort();
        for (size_t r = 0; r < kRows; ++r)
          for (size_t c = 0; c < kCols; ++c)
            if (a.real[r * kCols + c] != value(c * kRows + r)) std::abort();
      }
    } catch (const std::exception&) {
    }
    eit::fuzz::check_nothing_open(*name ? "after read_mat_variable(v)"
                                        : "after read_mat_variable(\"\")");
  }
  eit::fuzz::open_and_read_all(path, "mat", eit::fuzz::protocol(),
                               std::filesystem::file_size(path));
  eit::fuzz::check_nothing_open("after the recording reader");
  return 0;
}
