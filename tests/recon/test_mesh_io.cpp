// CSV mesh import and the mesh checks: every rejected mesh names the element or node at fault.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <unistd.h>

#include "eit/recon/mesh_boundary.hpp"
#include "eit/recon/mesh_check.hpp"
#include "eit/recon/mesh_io.hpp"
#include "recon_fixtures.hpp"

using namespace eit::recon;

namespace {

// Two triangles forming the unit square, electrodes on three corners, ref node 0 excluded.
Mesh square() {
  Mesh m;
  m.nodes.resize(4, 2);
  m.nodes << 0, 0, 1, 0, 1, 1, 0, 1;
  m.elements.resize(2, 3);
  m.elements << 0, 1, 2, 0, 2, 3;
  m.electrode_nodes = {1, 2, 3};
  m.ref_node = 0;
  return m;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = std::filesystem::temp_directory_path() /
           fmt::format("eit_mesh_io_{}_{}", ::getpid(), counter++);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
  }
};

}  // namespace

TEST_CASE("pyEIT h0=0.1 CSV folder loads with 376 nodes, 686 triangles, 16 electrodes, ref 16") {
  const auto mesh = eit::test::pyeit_mesh_h01();
  if (!mesh) return;
  CHECK(mesh->n_nodes() == 376);
  CHECK(mesh->n_elems() == 686);
  CHECK(mesh->n_electrodes() == 16);
  CHECK(mesh->ref_node == 16);
  CHECK(boundary_nodes(*mesh).size() == boundary_edges(*mesh).size());  // one closed loop
}

TEST_CASE("three-column nodes drop z and el_pos may be a single row") {
  TempDir dir;
  dir.write("nodes.csv", "0,0,5\n1,0,5\n1,1,5\n0,1,5\n");
  dir.write("elements.csv", "0,1,2\n0,2,3\n");
  dir.write("el_pos.csv", "1,2,3\n");
  const Mesh m = load_mesh_csv_folder(dir.path);
  CHECK(m.n_nodes() == 4);
  CHECK(m.nodes(2, 0) == 1.0);
  CHECK(m.electrode_nodes == std::vector<int>{1, 2, 3});
  CHECK(m.ref_node == 0);
}

TEST_CASE("ref node follows pyEIT: first of 0..n_el that is not an electrode") {
  CHECK(pyeit_ref_node({1, 2, 3}) == 0);
  CHECK(pyeit_ref_node({0, 1, 2, 3}) == 4);
  CHECK(pyeit_ref_node({0, 2, 1}) == 3);
}

TEST_CASE("CSV errors name the file, line and value") {
  TempDir dir;
  dir.write("nodes.csv", "0,0\n1,0\n1,oops\n0,1\n");
  dir.write("elements.csv", "0,1,2\n0,2,3\n");
  dir.write("el_pos.csv", "1\n2\n3\n");
  CHECK_THROWS_WITH_AS(load_mesh_csv_folder(dir.path), doctest::Contains("nodes.csv:3"),
                       std::invalid_argument);
  dir.write("nodes.csv", "0,0\n1,0\n1,1\n0,1\n");
  dir.write("elements.csv", "0,1,2\n0,2.5,3\n");
  CHECK_THROWS_WITH_AS(load_mesh_csv_folder(dir.path), doctest::Contains("elements.csv:2"),
                       std::invalid_argument);
  dir.write("elements.csv", "0,1,2\n0,2\n");
  CHECK_THROWS_WITH_AS(load_mesh_csv_folder(dir.path), doctest::Contains("2 columns"),
                       std::invalid_argument);
  dir.write("elements.csv", "0,1,2\n0,2,3\n");
  std::filesystem::remove(dir.path / "el_pos.csv");
  CHECK_THROWS_WITH_AS(load_mesh_csv_folder(dir.path), doctest::Contains("el_pos.csv"),
                       std::runtime_error);
}

TEST_CASE("check_mesh accepts a valid mesh") { CHECK_NOTHROW(check_mesh(square())); }

TEST_CASE("check_mesh names an inverted element and its signed area") {
  Mesh m = square();
  m.elements.row(1) << 0, 3, 2;
  CHECK_THROWS_WITH_AS(check_mesh(m), doctest::Contains("element 1 = (0, 3, 2) is inverted"),
                       std::invalid_argument);
}

TEST_CASE("check_mesh names a degenerate element") {
  Mesh m = square();
  m.nodes.row(3) << 0.5, 0.5;  // on the diagonal 0–2: element 1 has zero area
  CHECK_THROWS_WITH_AS(check_mesh(m), doctest::Contains("element 1 = (0, 2, 3) is degenerate"),
                       std::invalid_argument);
}

TEST_CASE("check_mesh names an out-of-range node index") {
  Mesh m = square();
  m.elements(0, 2) = 7;
  CHECK_THROWS_WITH_AS(check_mesh(m), doctest::Contains("element 0 = (0, 1, 7) uses node 7"),
                       std::invalid_argument);
}

TEST_CASE("check_mesh names an unreferenced node") {
  Mesh m = square();
  m.nodes.conservativeResize(5, 2);
  m.nodes.row(4) << 2, 2;
  CHECK_THROWS_WITH_AS(check_mesh(m), doctest::Contains("node 4 at (2, 2) is used by no element"),
                       std::invalid_argument);
}

TEST_CASE("check_mesh names an electrode that is not on the boundary") {
  const auto mesh = eit::test::pyeit_mesh_h01();
  if (!mesh) return;
  Mesh m = *mesh;
  const std::vector<int> boundary = boundary_nodes(m);
  int interior = 0;
  while (std::binary_search(boundary.begin(), boundary.end(), interior)) ++interior;
  m.electrode_nodes[5] = interior;
  const std::string expected = fmt::format("h0_0.1: electrode 5 is node {}", interior);
  CHECK_THROWS_WITH_AS(check_mesh(m, "h0_0.1"), doctest::Contains(expected.c_str()),
                       std::invalid_argument);
}

TEST_CASE("boundary edges run counter-clockwise with the domain on their left") {
  const Mesh m = square();
  const std::vector<int> next = boundary_successors(m);
  CHECK(next == std::vector<int>{1, 2, 3, 0});
}
