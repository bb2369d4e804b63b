// MATLAB v7.3 cells (datasets of object references into /#refs#) beside a matrix, written here
// with the HDF5 C API, valid and forged. libmatio 1.5.23 follows every cell's references while
// it lists the variables, before any variable is chosen, so one bad cell anywhere in the file
// is refused by name (mat73_cells.hpp) whichever variable is asked for.
#include <doctest/doctest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/array_file.hpp"
#include "h5_test_attribute.hpp"
#include "mat_test_support.hpp"

namespace fs = std::filesystem;

namespace {

void class_attribute(hid_t object, const std::string& value) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, value.size());
  eit::test::write_h5_attribute(object, "MATLAB_class", type, type, value.c_str(), 1);
  H5Tclose(type);
}

void double_dataset(hid_t loc, const char* name, const std::vector<hsize_t>& dims,
                    const std::vector<double>& values) {
  const hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  const hid_t set =
      H5Dcreate2(loc, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(set >= 0);
  REQUIRE(H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0);
  class_attribute(set, "double");
  H5Dclose(set);
  H5Sclose(space);
}

hobj_ref_t reference(hid_t file, const char* path) {
  hobj_ref_t r = 0;
  REQUIRE(H5Rcreate(&r, file, path, H5R_OBJECT, -1) >= 0);
  return r;
}

// The cell `name` of dataset shape `dims` (MATLAB's reversed), holding `refs` (left unwritten
// when empty), with MATLAB_class "cell"; `type` the dataset's type.
void cell(hid_t file, const char* name, const std::vector<hsize_t>& dims,
          const std::vector<hobj_ref_t>& refs, hid_t type = H5T_STD_REF_OBJ) {
  const hid_t space = dims.empty() ? H5Screate(H5S_SCALAR)
                                   : H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  const hid_t set = H5Dcreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(set >= 0);
  if (!refs.empty())
    REQUIRE(H5Dwrite(set, H5T_STD_REF_OBJ, H5S_ALL, H5S_ALL, H5P_DEFAULT, refs.data()) >= 0);
  class_attribute(set, "cell");
  H5Dclose(set);
  H5Sclose(space);
}

// A v7.3 file as MATLAB lays it out: `v` (3 × 2 doubles), /#refs#/a (a 1 × 1 double, a cell
// element), and whatever `add` writes (the cells under test).
fs::path mat73_with(const std::string& name, const std::function<void(hid_t)>& add) {
  const fs::path p =
      fs::temp_directory_path() / fmt::format("eit_mat73_cells_{}_{}", ::getpid(), name);
  const hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  H5Pset_userblock(fcpl, 512);
  const hid_t file = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  REQUIRE(file >= 0);
  double_dataset(file, "v", {2, 3}, {1, 2, 3, 4, 5, 6});
  const hid_t refs = H5Gcreate2(file, "#refs#", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  double_dataset(refs, "a", {1, 1}, {2.5});
  H5Gclose(refs);
  add(file);
  H5Fclose(file);
  H5Pclose(fcpl);
  std::fstream(p, std::ios::in | std::ios::out | std::ios::binary) << eit::test::mat_header(
      "MATLAB 7.3 MAT-file, Platform: GLNXA64, eitstream test HDF5 schema 1.00 .", 0x0200);
  return p;
}

// Reads v, and checks that every HDF5 object opened on the way was closed again.
std::string read_v_error(const fs::path& p) {
  const std::string why = eit::test::mat_read_error(p, "v");
  CHECK(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0);
  return why;
}

}  // namespace

TEST_CASE("a v7.3 .mat cell as MATLAB writes it is listed beside a matrix and not read as one") {
  if (eit::test::skip_without_matio()) return;
  const auto p = mat73_with("ok.mat", [](hid_t f) {
    cell(f, "c", {1, 2}, {reference(f, "/#refs#/a"), reference(f, "/#refs#/a")});
  });
  CHECK(read_v_error(p).empty());
  CHECK(eit::recon::read_mat_variable(p, "v").size() == 6);
  CHECK(eit::test::mat_read_error(p, "c").find("variable 'c' is not a numeric array") !=
        std::string::npos);
  fs::remove(p);
}

TEST_CASE("a v7.3 .mat cell that leads back to itself or to a group holding it is refused") {
  if (eit::test::skip_without_matio()) return;
  // Found by fuzz_mat73 once it wrote cells: libmatio follows references while listing the
  // variables and recursed until the stack overflowed (SIGSEGV).
  const auto itself = mat73_with("self.mat", [](hid_t f) {
    cell(f, "c", {1, 1}, {0});
    const hid_t set = H5Dopen2(f, "c", H5P_DEFAULT);
    const hobj_ref_t self = reference(f, "/c");
    REQUIRE(H5Dwrite(set, H5T_STD_REF_OBJ, H5S_ALL, H5S_ALL, H5P_DEFAULT, &self) >= 0);
    H5Dclose(set);
  });
  std::string why = read_v_error(itself);
  CAPTURE(why);
  CHECK(why.find("cell '/c' leads back to '/c' (through '/c'), which holds it") !=
        std::string::npos);
  const auto root = mat73_with("root.mat", [](hid_t f) {
    cell(f, "c", {1, 1}, {reference(f, "/")});
  });
  why = read_v_error(root);
  CHECK(why.find("cell '/c' leads back to '/c' (through '/c')") != std::string::npos);
  fs::remove(itself);
  fs::remove(root);
}

TEST_CASE("a v7.3 .mat cell that is scalar, not references, too large or dangling is refused") {
  if (eit::test::skip_without_matio()) return;
  struct Case {
    const char* name;
    std::function<void(hid_t)> add;
    std::string expected;
  };
  const Case cases[] = {
      // libmatio left the element's dataset open (the file stayed open after the read).
      {"scalar.mat", [](hid_t f) { cell(f, "c", {}, {reference(f, "/#refs#/a")}); },
       "cell '/c' has 0 dimensions, expected 2 or more"},
      // libmatio reads any dataset classed "cell" as references, one pointer per value
      // allocated first: 2^37 values declared (never written) asked calloc for 1 TiB.
      {"numbers.mat",
       [](hid_t f) {
         cell(f, "c", {1, hsize_t{1} << 37}, {}, H5T_STD_U64LE);
       },
       "cell '/c' claims 137438953472 elements, more than the"},
      {"doubles.mat",
       [](hid_t f) {
         cell(f, "c", {1, 2}, {}, H5T_IEEE_F64LE);
       },
       "cell '/c' does not hold object references"},
      {"unwritten.mat",
       [](hid_t f) {
         cell(f, "c", {1, 2}, {});
       },
       "element 1 of cell '/c' is a null reference"},
      {"past_end.mat",
       [](hid_t f) {
         cell(f, "c", {1, 1}, {hobj_ref_t{1} << 40});
       },
       "element 1 of cell '/c' points at no object"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto p = mat73_with(c.name, c.add);
    const std::string why = read_v_error(p);
    CAPTURE(why);
    CHECK(why.find(c.expected) != std::string::npos);
    fs::remove(p);
  }
}
