// Tetrahedral .msh import (read_msh → read_msh_tetrahedra, Gmsh's own reader): a generated cylinder
// with rectangular electrode patches saved as .msh reads back as the same mesh, the same patches
// and the same CEM measurements; files without electrode groups are refused by name.
#include <doctest/doctest.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/mesh_generator.hpp"
#include "eit/recon/mesh_generator_3d.hpp"
#include "eit/recon/msh_reader.hpp"
#include "pyeit_csv.hpp"
#include "test_data.hpp"

using namespace eit::recon;
namespace fs = std::filesystem;

namespace {

fs::path temp_msh(const std::string& name) {
  return fs::temp_directory_path() / fmt::format("eit_msh3d_{}_{}", ::getpid(), name);
}

// Coordinates of a node set, rounded, for comparing meshes whose node order differs.
std::set<std::array<long long, 3>> coordinates(const Mesh& m, const std::vector<int>& nodes) {
  std::set<std::array<long long, 3>> out;
  for (int n : nodes)
    out.insert({std::llround(m.nodes(n, 0) * 1e9), std::llround(m.nodes(n, 1) * 1e9),
                std::llround(m.nodes(n, 2) * 1e9)});
  return out;
}

}  // namespace

TEST_CASE("a generated tetrahedral .msh with electrode surfaces reads back as the same model") {
  if (!mesh_generator_available()) {
    eit::test::report_skip("tetrahedral .msh import", "built without Gmsh");
    return;
  }
  Mesh3dOptions o;
  o.n_electrodes = 16;
  o.n_rings = 2;
  o.h0 = 0.3;
  o.h_electrode = 0.08;
  o.electrode_shape = Mesh3dOptions::ElectrodeShape::kRectangle;
  o.electrode_width = 0.25;
  o.electrode_height = 0.15;
  o.save_msh = temp_msh("cyl.msh");
  const Mesh made = generate_mesh_3d(o);
  const Mesh read = read_msh(o.save_msh);
  CHECK(read.dim() == 3);
  CHECK(read.n_nodes() == made.n_nodes());
  CHECK(read.n_elems() == made.n_elems());
  REQUIRE(read.n_electrodes() == 16);
  REQUIRE(read.electrode_patches.size() == 16);
  for (int e = 0; e < 16; ++e) {
    INFO("electrode " << e);
    CHECK((read.nodes.row(read.electrode_nodes[static_cast<size_t>(e)]) -
           made.nodes.row(made.electrode_nodes[static_cast<size_t>(e)]))
              .norm() < 1e-12);
    CHECK(coordinates(read, read.electrode_patches[static_cast<size_t>(e)]) ==
          coordinates(made, made.electrode_patches[static_cast<size_t>(e)]));
  }
  // Same geometry and patches: the same CEM measurements (node order differs, so not bitwise).
  ForwardOptions cem;
  cem.electrodes = ForwardOptions::Electrodes::kComplete;
  cem.contact_impedance = 0.02;
  const Protocol p = make_protocol({.n_electrodes = 16});
  ForwardModel a(made, p, cem), b(read, p, cem);
  CHECK(eit::test::rel_fro_error(b.solve(), a.solve()) < 1e-9);
  fs::remove(o.save_msh);
}

TEST_CASE("a tetrahedral .msh without electrode groups is refused, naming the file") {
  if (!mesh_generator_available()) {
    eit::test::report_skip("tetrahedral .msh errors", "built without Gmsh");
    return;
  }
  const fs::path path = temp_msh("bare.msh");
  std::ofstream(path) << "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n"
                         "3 0 1 0\n4 0 0 1\n$EndNodes\n$Elements\n1\n1 4 2 1 1 1 2 3 4\n"
                         "$EndElements\n";
  CHECK_THROWS_WITH_AS(read_msh(path), doctest::Contains("no electrodes"), std::runtime_error);
  CHECK_THROWS_WITH_AS(read_msh(path), doctest::Contains(path.string().c_str()), std::runtime_error);
  fs::remove(path);
}
