// MATLAB v7.3 (.mat as HDF5) through the shared hardened reader: files written here with the
// HDF5 C API the way MATLAB lays them out (512-byte header in the user block, MATLAB_class on
// each variable, column-major data as a transposed dataset), valid and forged.
#include <doctest/doctest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/array_file.hpp"
#include "eit/recon/mat_file.hpp"
#include "h5_test_attribute.hpp"
#include "mat_test_support.hpp"
#include "test_data.hpp"

using namespace eit::recon;
namespace fs = std::filesystem;

namespace {

void string_attribute(hid_t object, const char* name, const std::string& value) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, value.size());
  eit::test::write_h5_attribute(object, name, type, type, value.c_str(), 1);
  H5Tclose(type);
}

void int_attribute(hid_t object, const char* name, const std::vector<int32_t>& values) {
  eit::test::write_h5_attribute(object, name, H5T_NATIVE_INT32, H5T_NATIVE_INT32, values.data(),
                                values.size());
}

struct Variable {
  std::string name = "v";
  std::vector<hsize_t> dims;  // the dataset's (MATLAB's reversed)
  std::vector<double> values;
  bool deflate = false;
  bool empty_marker = false;
  std::vector<int32_t> global;  // MATLAB_global's values, when not empty
};

// A v7.3 file holding `vars` as double variables.
fs::path mat73_file(const std::string& name, const std::vector<Variable>& vars) {
  const fs::path p = fs::temp_directory_path() / fmt::format("eit_mat73_{}_{}", ::getpid(), name);
  const hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  H5Pset_userblock(fcpl, 512);
  const hid_t file = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  REQUIRE(file >= 0);
  for (const Variable& v : vars) {
    const hid_t space = H5Screate_simple(static_cast<int>(v.dims.size()), v.dims.data(), nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (v.deflate) {
      H5Pset_chunk(dcpl, static_cast<int>(v.dims.size()), v.dims.data());
      H5Pset_deflate(dcpl, 6);
    }
    const hid_t type = v.empty_marker ? H5T_NATIVE_UINT64 : H5T_NATIVE_DOUBLE;
    const hid_t set = H5Dcreate2(file, v.name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    REQUIRE(set >= 0);
    std::vector<uint64_t> dims_vector(v.values.size());
    for (size_t i = 0; i < v.values.size(); ++i) dims_vector[i] = uint64_t(v.values[i]);
    const void* data = v.empty_marker ? static_cast<const void*>(dims_vector.data())
                                      : static_cast<const void*>(v.values.data());
    REQUIRE(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    string_attribute(set, "MATLAB_class", "double");
    if (v.empty_marker) int_attribute(set, "MATLAB_empty", {1});
    if (!v.global.empty()) int_attribute(set, "MATLAB_global", v.global);
    H5Dclose(set);
    H5Pclose(dcpl);
    H5Sclose(space);
  }
  H5Fclose(file);
  H5Pclose(fcpl);
  std::fstream(p, std::ios::in | std::ios::out | std::ios::binary) << eit::test::mat_header(
      "MATLAB 7.3 MAT-file, Platform: GLNXA64, eitstream test HDF5 schema 1.00 .", 0x0200);
  return p;
}

std::string error_of(const fs::path& p) { return eit::test::mat_read_error(p); }
using eit::test::skip_without_matio;

}  // namespace

TEST_CASE("a v7.3 .mat matrix, plain or deflated, reads back in row-major order") {
  if (skip_without_matio()) return;
  // MATLAB's 3×2 [1 4; 2 5; 3 6] is stored column-major: a 2×3 dataset 1 2 3 / 4 5 6.
  for (const bool deflate : {false, true}) {
    CAPTURE(deflate);
    Variable v;
    v.dims = {2, 3};
    v.values = {1, 2, 3, 4, 5, 6};
    v.deflate = deflate;
    const auto p = mat73_file("ok.mat", {v});
    const DenseArray a = read_mat_variable(p, "v");
    CHECK(a.shape == std::vector<size_t>{3, 2});
    CHECK(a.real == std::vector<double>{1, 4, 2, 5, 3, 6});
    const auto vars = list_mat_variables(p, "ok.mat");
    REQUIRE(vars.size() == 1);
    CHECK(vars[0].numeric);
    CHECK(vars[0].compressed == deflate);
    fs::remove(p);
  }
}

TEST_CASE("a v7.3 .mat empty array whose dimensions vector fits is accepted beside a matrix") {
  if (skip_without_matio()) return;
  Variable matrix;
  matrix.dims = {2, 1};
  matrix.values = {7, 8};
  Variable empty;
  empty.name = "e";
  empty.dims = {2};
  empty.values = {0, 0};  // MATLAB's zeros(0, 0)
  empty.empty_marker = true;
  const auto p = mat73_file("empty_ok.mat", {matrix, empty});
  CHECK(list_mat_variables(p, "empty_ok.mat").size() == 2);
  CHECK(read_mat_variable(p, "v").real == std::vector<double>{7, 8});
  fs::remove(p);
}

TEST_CASE("a v7.3 .mat dataset marked empty with more values than its last dimension is refused") {
  if (skip_without_matio()) return;
  // libmatio 1.5.23 reads such a dataset whole into a buffer of its last dimension's length:
  // this file (a 100000×2 dimensions vector) corrupted the heap before the check (glibc abort).
  Variable forged;
  forged.dims = {100000, 2};
  forged.values.assign(200000, 7);
  forged.empty_marker = true;
  const auto p = mat73_file("empty_forged.mat", {forged});
  const std::string why = error_of(p);
  CAPTURE(why);
  CHECK(why.find(p.string()) != std::string::npos);
  CHECK(why.find("dataset '/v' is marked MATLAB_empty") != std::string::npos);
  CHECK(why.find("but it is 100000×2") != std::string::npos);

  forged.dims = {40};  // one row, but longer than any MATLAB rank
  forged.values.assign(40, 1);
  const auto q = mat73_file("empty_long.mat", {forged});
  CHECK(error_of(q).find("but it is 40") != std::string::npos);
  fs::remove(p);
  fs::remove(q);
}

TEST_CASE("a v7.3 .mat attribute libmatio reads as one integer must hold one value") {
  if (skip_without_matio()) return;
  // libmatio 1.5.23 reads MATLAB_global (and MATLAB_empty, _int_decode, _sparse) into one int on
  // its stack whatever the attribute holds.
  Variable v;
  v.dims = {1, 2};
  v.values = {1, 2};
  v.global = {1, 1, 1, 1, 1};
  const auto p = mat73_file("global.mat", {v});
  const std::string why = error_of(p);
  CAPTURE(why);
  CHECK(why.find("attribute MATLAB_global of '/v' holds 5 values, expected 1") !=
        std::string::npos);
  v.global = {0};
  const auto q = mat73_file("global_ok.mat", {v});
  CHECK(error_of(q).empty());
  fs::remove(p);
  fs::remove(q);
}

TEST_CASE("a .mat file whose header says v7.3 but is not HDF5 is refused by name") {
  if (skip_without_matio()) return;
  std::string head = eit::test::mat_header("MATLAB 7.3 MAT-file", 0x0200);
  head.append(1000, '\x11');
  const fs::path p = fs::temp_directory_path() / fmt::format("eit_mat73_{}_fake", ::getpid());
  std::ofstream(p, std::ios::binary) << head;
  const std::string why = error_of(p);
  CAPTURE(why);
  CHECK(why.find("its header says MATLAB v7.3, but it is not an HDF5 file") != std::string::npos);
  fs::remove(p);
}

namespace {

// Adds to a v7.3 file (from mat73_file) a struct `s` with one field `a`, its field names written
// by `fields` (MATLAB: a 1-D attribute of variable-length char sequences, one per field).
template <typename Fields>
void add_struct(const fs::path& p, Fields fields) {
  const hid_t file = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const hid_t g = H5Gcreate2(file, "s", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  string_attribute(g, "MATLAB_class", "struct");
  fields(g);
  const double one = 1.0;
  const hsize_t dims[2] = {1, 1};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t a =
      H5Dcreate2(g, "a", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(H5Dwrite(a, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &one) >= 0);
  string_attribute(a, "MATLAB_class", "double");
  H5Dclose(a);
  H5Sclose(space);
  H5Gclose(g);
  H5Fclose(file);
}

// MATLAB_fields holding `rank` dimensions of 1 × 1 × … field names "a", as `type` (vlen char
// sequences as MATLAB writes them, or variable-length strings).
void fields_attribute(hid_t g, int rank, bool as_strings) {
  const std::vector<hsize_t> dims(static_cast<size_t>(rank), 1);
  const hid_t space =
      rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims.data(), nullptr);
  hid_t type = -1;
  const char* text = "a";
  hvl_t seq{1, const_cast<char*>(text)};
  const void* data = &seq;
  if (as_strings) {
    type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    data = &text;
  } else {
    type = H5Tvlen_create(H5T_NATIVE_CHAR);
  }
  const hid_t a = H5Acreate2(g, "MATLAB_fields", type, space, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(a >= 0);
  REQUIRE(H5Awrite(a, type, data) >= 0);
  H5Aclose(a);
  H5Tclose(type);
  H5Sclose(space);
}

Variable matrix_v() {
  Variable v;
  v.dims = {2, 3};
  v.values = {1, 2, 3, 4, 5, 6};
  return v;
}

}  // namespace

TEST_CASE("a v7.3 .mat MATLAB_class must hold one string") {
  if (skip_without_matio()) return;
  // libmatio 1.5.23 reads MATLAB_class into a buffer of one string's length whatever the
  // attribute holds: two strings overflowed it (found by fuzz_mat73).
  const auto p = mat73_file("class2.mat", {matrix_v()});
  {
    const hid_t file = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t set = H5Dopen2(file, "v", H5P_DEFAULT);
    H5Adelete(set, "MATLAB_class");
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, 6);
    eit::test::write_h5_attribute(set, "MATLAB_class", type, type, "doubledouble", 2);
    H5Tclose(type);
    H5Dclose(set);
    H5Fclose(file);
  }
  const std::string why = error_of(p);
  CAPTURE(why);
  CHECK(why.find("attribute MATLAB_class of '/v' holds 2 values, expected 1") != std::string::npos);
  fs::remove(p);
}

TEST_CASE("a v7.3 .mat struct's MATLAB_fields must be a 1-D list of char sequences") {
  if (skip_without_matio()) return;
  // libmatio 1.5.23 writes MATLAB_fields' extent into one integer on its stack (rank 2
  // overflowed it), leaves that count at 0 for a scalar and still reads one value into no room
  // (both found by fuzz_mat73), and reads the values as char sequences whatever their type.
  const auto ok = mat73_file("fields_ok.mat", {matrix_v()});
  add_struct(ok, [](hid_t g) { fields_attribute(g, 1, false); });
  CHECK(error_of(ok).empty());  // MATLAB's own layout still reads
  for (int rank : {0, 2}) {
    const auto p = mat73_file(fmt::format("fields_rank{}.mat", rank), {matrix_v()});
    add_struct(p, [rank](hid_t g) { fields_attribute(g, rank, false); });
    const std::string why = error_of(p);
    CAPTURE(why);
    CHECK(why.find(fmt::format("attribute MATLAB_fields of '/s' has {} dimensions, expected 1",
                               rank)) != std::string::npos);
    fs::remove(p);
  }
  const auto strings = mat73_file("fields_strings.mat", {matrix_v()});
  add_struct(strings, [](hid_t g) { fields_attribute(g, 1, true); });
  const std::string why = error_of(strings);
  CAPTURE(why);
  CHECK(why.find("attribute MATLAB_fields of '/s' is not a list of variable-length character "
                 "sequences") != std::string::npos);
  fs::remove(ok);
  fs::remove(strings);
}
