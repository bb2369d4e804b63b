#include <doctest/doctest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/model_file.hpp"
#include "h5_test_attribute.hpp"
#include "test_data.hpp"

using namespace eit::recon;
namespace fs = std::filesystem;

namespace {

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / fmt::format("eit_model_{}_{}", ::getpid(), name);
}

Model grid_model() {
  Model m;
  m.algorithm = "greit";
  m.parameters_json = R"({"p":0.5,"lambda":0.01})";
  m.protocol = make_protocol({.n_electrodes = 8});
  const auto n_meas = static_cast<Eigen::Index>(m.protocol.n_meas());
  GridGeometry g;
  g.nx = 4;
  g.ny = 3;
  g.x0 = -1;
  g.y0 = -1;
  g.dx = 0.5;
  g.dy = 2.0 / 3;
  g.mask = {1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1};
  m.geometry = g;
  m.H = MatrixRowMajorF::Random(12, n_meas);
  m.v_ref = Eigen::VectorXd::LinSpaced(n_meas, 0.5, 1.5);
  m.normalize = true;
  return m;
}

Model mesh_model() {
  Model m;
  m.algorithm = "jac";
  m.parameters_json = R"({"method":"kotre"})";
  m.protocol = make_protocol({.n_electrodes = 4});
  MeshGeometry g;
  g.nodes.resize(5, 2);
  g.nodes << -1, 0, 0, 1, 1, 0, 0, -1, 0, 0;
  g.elements.resize(4, 3);
  g.elements << 0, 4, 1, 1, 4, 2, 2, 4, 3, 3, 4, 0;
  g.electrode_nodes = {0, 1, 2, 3};
  m.geometry = g;
  m.H = MatrixRowMajorF::Random(4, static_cast<Eigen::Index>(m.protocol.n_meas()));
  return m;
}

bool have_h5py() { return std::system("python3 -c 'import h5py' >/dev/null 2>&1") == 0; }

int run_python(const fs::path& script_file, const std::string& script) {
  std::ofstream(script_file) << script;
  return std::system(fmt::format("python3 {}", script_file.string()).c_str());
}

}  // namespace

TEST_CASE("model file round trip keeps every field and the id") {
  for (Model m : {grid_model(), mesh_model()}) {
    const fs::path file = temp_path("roundtrip.h5");
    save_model(file, m);
    CHECK(m.id.size() == 16);
    const Model r = load_model(file);
    CHECK(r.id == m.id);
    CHECK(r.H == m.H);
    CHECK(r.v_ref == m.v_ref);
    CHECK(r.normalize == m.normalize);
    CHECK(r.algorithm == m.algorithm);
    CHECK(r.parameters_json == m.parameters_json);
    CHECK(r.protocol.n_electrodes == m.protocol.n_electrodes);
    REQUIRE(r.protocol.n_meas() == m.protocol.n_meas());
    for (size_t i = 0; i < m.protocol.n_meas(); ++i) {
      CHECK(r.protocol.measurements[i].drive == m.protocol.measurements[i].drive);
      CHECK(r.protocol.measurements[i].positive == m.protocol.measurements[i].positive);
      CHECK(r.protocol.measurements[i].negative == m.protocol.measurements[i].negative);
    }
    CHECK(r.geometry.index() == m.geometry.index());
    if (const auto* g = std::get_if<GridGeometry>(&m.geometry)) {
      const auto& rg = std::get<GridGeometry>(r.geometry);
      CHECK(rg.nx == g->nx);
      CHECK(rg.dy == g->dy);
      CHECK(rg.mask == g->mask);
    } else {
      const auto& g0 = std::get<MeshGeometry>(m.geometry);
      const auto& rg = std::get<MeshGeometry>(r.geometry);
      CHECK(rg.nodes == g0.nodes);
      CHECK(rg.elements == g0.elements);
      CHECK(rg.electrode_nodes == g0.electrode_nodes);
    }
    fs::remove(file);
  }
}

TEST_CASE("model id is stable for the same content and changes with H, v_ref or parameters") {
  Model a = grid_model();
  Model b = a;
  CHECK(model_content_hash(a) == model_content_hash(b));
  b.H(3, 7) += 1e-6f;
  CHECK(model_content_hash(a) != model_content_hash(b));
  b = a;
  b.v_ref[0] = 0.25;
  CHECK(model_content_hash(a) != model_content_hash(b));
  b = a;
  b.parameters_json = R"({"p":0.5,"lambda":0.02})";
  CHECK(model_content_hash(a) != model_content_hash(b));
  b = a;
  b.normalize = false;
  CHECK(model_content_hash(a) != model_content_hash(b));
  // Saving twice gives the same id; the id is not hashed into itself.
  const fs::path f1 = temp_path("id1.h5"), f2 = temp_path("id2.h5");
  save_model(f1, a);
  const std::string first = a.id;
  save_model(f2, a);
  CHECK(a.id == first);
  fs::remove(f1);
  fs::remove(f2);
}

TEST_CASE("inconsistent models are refused before writing, naming the field") {
  Model m = grid_model();
  m.v_ref.resize(5);
  CHECK_THROWS_WITH_AS(save_model(temp_path("bad.h5"), m),
                       doctest::Contains("v_ref has 5 values, expected 40"), std::invalid_argument);
  m = grid_model();
  std::get<GridGeometry>(m.geometry).nx = 5;
  CHECK_THROWS_WITH_AS(save_model(temp_path("bad.h5"), m),
                       doctest::Contains("H has 12 rows, the grid has 3 × 5 = 15 pixels"),
                       std::invalid_argument);
}

TEST_CASE(
    "a matrix that cannot give an image is refused: NaN or infinite H or v_ref and all-zero H") {
  Model m = grid_model();
  m.H(3, 7) = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH_AS(save_model(temp_path("bad.h5"), m), doctest::Contains("H[3, 7] is nan"),
                       std::invalid_argument);
  m = grid_model();
  m.H(11, 0) = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH_AS(validate_model(m, "m"), doctest::Contains("H[11, 0] is inf"),
                       std::invalid_argument);
  m = grid_model();
  m.H.setZero();
  CHECK_THROWS_WITH_AS(validate_model(m, "m"), doctest::Contains("H is all zero"),
                       std::invalid_argument);
  m = grid_model();
  m.v_ref(4) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(validate_model(m, "m"), doctest::Contains("v_ref[4] is nan"),
                       std::invalid_argument);
  CHECK_NOTHROW(validate_model(grid_model(), "m"));
}

TEST_CASE("loading a missing or non-HDF5 file names the file") {
  CHECK_THROWS_WITH_AS(load_model(temp_path("nope.h5")), doctest::Contains("not found"),
                       std::runtime_error);
  const fs::path text = temp_path("text.h5");
  std::ofstream(text) << "not hdf5\n";
  CHECK_THROWS_WITH_AS(load_model(text), doctest::Contains("not an HDF5 file"), std::runtime_error);
  fs::remove(text);
}

TEST_CASE("a model attribute holding several values is refused before it is read into one") {
  // Each attribute is read into one value and HDF5 writes every value it holds: n_electrodes
  // rewritten as four int64s overran the int64 it was read into.
  const fs::path file = temp_path("attr4.h5");
  Model m = grid_model();
  save_model(file, m);
  {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0);
    const hid_t g = H5Gopen2(f, "protocol", H5P_DEFAULT);
    REQUIRE(H5Adelete(g, "n_electrodes") >= 0);
    const int64_t values[4] = {8, 8, 8, 8};
    eit::test::write_h5_attribute(g, "n_electrodes", H5T_STD_I64LE, H5T_NATIVE_INT64, values, 4);
    H5Gclose(g);
    H5Fclose(f);
  }
  CHECK_THROWS_WITH_AS(load_model(file),
                       doctest::Contains("attribute 'n_electrodes' holds 4 values, expected 1"),
                       std::runtime_error);
  fs::remove(file);
}

// Replaces integer attribute `name` of group `group` in `file` by `value`.
void set_int_attribute(const fs::path& file, const char* group, const char* name, int64_t value) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
  REQUIRE(H5Adelete(g, name) >= 0);
  eit::test::write_h5_attribute(g, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, 1);
  H5Gclose(g);
  H5Fclose(f);
}

TEST_CASE("a model's integer attribute beyond int is refused, not wrapped into a plausible one") {
  // nx = 2^32 + the true nx became the true nx, and the file loaded as if unedited.
  const fs::path file = temp_path("wrap.h5");
  Model m = grid_model();
  save_model(file, m);
  const auto nx = static_cast<int64_t>(std::get<GridGeometry>(m.geometry).nx);
  set_int_attribute(file, "geometry", "nx", (int64_t{1} << 32) + nx);
  const std::string expected = fmt::format(
      "/geometry: attribute 'nx' is {}, expected 1 to 2147483647", (int64_t{1} << 32) + nx);
  CHECK_THROWS_WITH_AS(load_model(file), doctest::Contains(expected.c_str()), std::runtime_error);
  save_model(file, m);
  set_int_attribute(file, "protocol", "n_electrodes", (int64_t{1} << 32) + 8);
  CHECK_THROWS_WITH_AS(
      load_model(file),
      doctest::Contains("/protocol: attribute 'n_electrodes' is 4294967304, expected 2 to 1024"),
      std::runtime_error);
  fs::remove(file);
}

// Replaces dataset `name` of `group` in `file` by one of `dims` with no values written: HDF5
// stores nothing for it (its fill value stands in), so a few bytes declare any extent.
void set_unwritten_dataset(const fs::path& file, const char* group, const char* name, hid_t type,
                           const std::vector<hsize_t>& dims) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
  REQUIRE(H5Ldelete(g, name, H5P_DEFAULT) >= 0);
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t set = H5Dcreate2(g, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(set >= 0);
  H5Dclose(set);
  H5Sclose(space);
  H5Gclose(g);
  H5Fclose(f);
}

TEST_CASE("a model dataset claiming more values than its file can hold is refused unread") {
  // H declared 2^18 × n_meas in a file of a few KB: load_model sized H by the declared shape and
  // read 42 MB of fill values before finding the rows did not match the grid (at 2^28 rows:
  // 3.2 GB allocated and filled, 7.5 s; found while writing fuzz_recon_model); a 2^20 × 2^20 mask
  // was a 1 TB allocation.
  const fs::path file = temp_path("unwritten.h5");
  Model m = grid_model();
  save_model(file, m);
  const auto n_meas = static_cast<hsize_t>(m.protocol.n_meas());
  set_unwritten_dataset(file, "/", "H", H5T_IEEE_F32LE, {hsize_t{1} << 18, n_meas});
  const std::string expected =
      fmt::format(": /H: {} values of 4 bytes, more than the {}-byte file can hold",
                  (hsize_t{1} << 18) * n_meas, fs::file_size(file));
  CHECK_THROWS_WITH_AS(load_model(file), doctest::Contains(expected.c_str()), std::runtime_error);
  save_model(file, m);
  set_int_attribute(file, "geometry", "nx", int64_t{1} << 20);
  set_int_attribute(file, "geometry", "ny", int64_t{1} << 20);
  set_unwritten_dataset(file, "geometry", "mask", H5T_STD_U8LE,
                        {hsize_t{1} << 20, hsize_t{1} << 20});
  CHECK_THROWS_WITH_AS(load_model(file),
                       doctest::Contains("/geometry/mask: 1099511627776 values of 1 bytes, more "
                                         "than the"),
                       std::runtime_error);
  fs::remove(file);
}

TEST_CASE("h5py reads the model file without eitstream, and edits are caught on load") {
  if (!have_h5py()) {
    eit::test::report_skip("h5py model file check", "python3 h5py not installed");
    return;
  }
  Model m = grid_model();
  const fs::path file = temp_path("h5py.h5"), script = temp_path("check.py");
  save_model(file, m);
  const std::string check = fmt::format(R"(
import h5py, json, numpy as np, sys
f = h5py.File("{file}", "r")
H = f["H"]
assert H.dtype == np.float32 and H.shape == (12, 40), (H.dtype, H.shape)
assert abs(float(H[3, 7]) - {h37}) < 1e-6, H[3, 7]
assert f["v_ref"].shape == (40,) and f["v_ref"].dtype == np.float64
assert f["protocol/measurements"].shape == (40, 3)
assert f["protocol/drives"].shape == (8, 2)
assert f["protocol"].attrs["n_electrodes"] == 8
assert f["protocol"].attrs["order"] == "std"
assert f["geometry"].attrs["kind"] == "grid"
assert f["geometry/mask"].shape == (3, 4) and f["geometry/mask"].dtype == np.uint8
assert f.attrs["algorithm"] == "greit"
assert json.loads(f.attrs["parameters"])["lambda"] == 0.01
assert f.attrs["model_id"] == "{id}"
assert f.attrs["format_version"] == 1
print("h5py ok")
)",
                                        fmt::arg("file", file.string()), fmt::arg("h37", m.H(3, 7)),
                                        fmt::arg("id", m.id));
  CHECK(run_python(script, check) == 0);

  // Change v_ref's length with h5py: the loader names the dataset and both shapes.
  CHECK(run_python(script, fmt::format(R"(
import h5py, numpy as np
with h5py.File("{}", "r+") as f:
    del f["v_ref"]
    f["v_ref"] = np.ones(39)
)",
                                       file.string())) == 0);
  CHECK_THROWS_WITH_AS(load_model(file), doctest::Contains("/v_ref: shape 39, expected 40"),
                       std::runtime_error);
  // Strings of the right shape in v_ref, then in H (read through the other reader, straight into
  // the matrix): the loader names the dataset and the types it reads.
  for (const char* name : {"v_ref", "H"}) {
    save_model(file, m);
    CHECK(run_python(script, fmt::format(R"(
import h5py, numpy as np
with h5py.File("{}", "r+") as f:
    shape = f["{}"].shape
    del f["{}"]
    f["{}"] = np.full(shape, b"x", dtype="S1")
)",
                                         file.string(), name, name, name)) == 0);
    const std::string refusal =
        fmt::format("/{}: not a numeric dataset, expected integers or floats", name);
    CHECK_THROWS_WITH_AS(load_model(file), doctest::Contains(refusal.c_str()), std::runtime_error);
  }
  // Change one value of H: the stored id no longer matches.
  save_model(file, m);
  CHECK(run_python(script, fmt::format(R"(
import h5py
with h5py.File("{}", "r+") as f:
    f["H"][0, 0] = 42.0
)",
                                       file.string())) == 0);
  CHECK_THROWS_WITH_AS(load_model(file), doctest::Contains("does not match its content"),
                       std::runtime_error);
  fs::remove(file);
  fs::remove(script);
}
