// `eitstream model build --dim 3` and `model info` on a 3-D model, through the real binary.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "cli_run.hpp"
#include "eit/recon/mesh_generator.hpp"
#include "gmsh_skip.hpp"
#include "eit/recon/model_file.hpp"
#include "test_data.hpp"

namespace fs = std::filesystem;
using namespace eit::recon;
using namespace eit::test;

namespace {

fs::path temp3d(const std::string& name) { return cli_temp_path("eit_cli3d", name); }

}  // namespace

TEST_CASE("model build --dim 3 meshes a two-ring cylinder and model info describes it") {
  if (skip_without_gmsh("model build --dim 3")) return;
  const fs::path out = temp3d("cyl.h5");
  const CliResult b = run_eitstream(fmt::format(
      "model build --dim 3 --mesh circle --height 1 --rings 2 --electrodes 16 --h0 0.35 "
      "--algorithm jac -o {}",
      out.string()));
  INFO(b.output);
  REQUIRE(b.code == 0);
  CHECK(contains(b.output, "tetrahedra"));
  CHECK(contains(b.output, "height 1, 2 ring(s)"));
  const Model m = load_model(out);
  const auto& g = std::get<MeshGeometry>(m.geometry);
  REQUIRE(g.nodes.cols() == 3);
  REQUIRE(g.elements.cols() == 4);
  CHECK(m.H.rows() == g.elements.rows());
  CHECK(m.H.cols() == 208);  // adjacent over all 16 electrodes
  // Ring heights default to height·(r + 1)/(rings + 1); electrode 8 opens the upper ring.
  CHECK(g.nodes(g.electrode_nodes[0], 2) == doctest::Approx(1.0 / 3));
  CHECK(g.nodes(g.electrode_nodes[8], 2) == doctest::Approx(2.0 / 3));

  const CliResult i = run_eitstream(fmt::format("model info {}", out.string()));
  INFO(i.output);
  CHECK(i.code == 0);
  CHECK(contains(i.output, fmt::format("mesh 3-D: {} nodes, {} tetrahedra, 16 electrode nodes",
                                       g.nodes.rows(), g.elements.rows())));
  CHECK(contains(i.output, "2 rings: z = 0.333333 (8), z = 0.666667 (8)"));
  CHECK(contains(i.output, "16 electrodes, drive distance 1"));

  // The synthetic phantoms are 2-D: run refuses them for a 3-D model instead of streaming
  // frames of another geometry (or reading its z column as y).
  const CliResult r = run_eitstream(fmt::format("run --model {} --duration 1 --quiet", out.string()));
  INFO(r.output);
  CHECK(r.code != 0);
  CHECK(contains(r.output, "is 3-D and the synthetic phantoms are 2-D"));
  fs::remove(out);
}

TEST_CASE("model build --dim 3 takes ring heights and refuses a 2-D GREIT --grid and bad rings by name") {
  if (skip_without_gmsh("model build --dim 3 options")) return;
  const fs::path out = temp3d("ell.h5");
  const CliResult b = run_eitstream(fmt::format(
      "model build --dim 3 --mesh ellipse:1.2,0.9 --height 2 --rings 3 --ring-z 0.5,1,1.5 "
      "--electrodes 24 --h0 0.5 --algorithm bp --pattern planar -o {}",
      out.string()));
  INFO(b.output);
  REQUIRE(b.code == 0);
  const Model m = load_model(out);
  const auto& g = std::get<MeshGeometry>(m.geometry);
  CHECK(g.nodes(g.electrode_nodes[23], 2) == doctest::Approx(1.5));
  CHECK(m.H.rows() == g.nodes.rows());  // back-projection: one row per node
  // planar, 3 rings of 8: each drive 5 measurements on its own ring, 8 on each other ring.
  CHECK(m.H.cols() == 24 * (5 + 16));
  CHECK(contains(m.parameters_json, R"("protocol": {"pattern": "planar", "n_rings": 3)"));
  const CliResult i = run_eitstream(fmt::format("model info {}", out.string()));
  CHECK(contains(i.output, "3 rings: z = 0.5 (8), z = 1 (8), z = 1.5 (8)"));
  CHECK(contains(i.output, R"("pattern": "planar")"));
  fs::remove(out);

  const CliResult greit = run_eitstream(fmt::format(
      "model build --dim 3 --h0 0.5 --algorithm greit --grid 16 -o {}", temp3d("g.h5").string()));
  CHECK(greit.code != 0);
  CHECK(contains(greit.output, "a 3-D GREIT's grid is --voxels"));
  const CliResult rings = run_eitstream(
      fmt::format("model build --dim 3 --rings 3 --electrodes 16 --algorithm jac -o {}",
                  temp3d("r.h5").string()));
  CHECK(rings.code != 0);
  CHECK(contains(rings.output, "16 electrodes on 3 rings"));
  const CliResult help = run_eitstream("model build --help");
  CHECK(contains(help.output, "--dim"));
  CHECK(contains(help.output, "--ring-z"));
}

TEST_CASE("model build --dim 3 with the complete electrode model on rectangular patches") {
  if (skip_without_gmsh("model build --dim 3 complete")) return;
  const fs::path out = temp3d("cem.h5");
  const CliResult b = run_eitstream(fmt::format(
      "model build --dim 3 --mesh circle --height 1 --rings 2 --electrodes 16 --h0 0.35 "
      "--h-electrode 0.1 --electrode-model complete --electrode-shape rect --electrode-width 0.3 "
      "--electrode-height 0.2 --contact-impedance 0.02 --algorithm jac --pattern planar -o {}",
      out.string()));
  INFO(b.output);
  REQUIRE(b.code == 0);
  CHECK(contains(b.output, "complete electrode model"));
  const Model m = load_model(out);
  CHECK(m.H.cols() == 208);  // planar 2 × 8: (5 + 8) per drive
  CHECK(contains(m.parameters_json, "complete"));
  fs::remove(out);
  const CliResult wide = run_eitstream(
      fmt::format("model build --dim 3 --h0 0.35 --electrode-model complete --electrode-width 0.9 "
                  "--algorithm jac -o {}",
                  temp3d("w.h5").string()));
  CHECK(wide.code != 0);
  CHECK(contains(wide.output, "electrode spacing"));
}

TEST_CASE("model build --dim 3 --voxels writes a voxel grid, --pattern square follows the path") {
  if (!mesh_generator_available()) {
    eit::test::report_skip("model build --dim 3 --voxels", "built without Gmsh");
    return;
  }
  const fs::path out = temp3d("vox.h5");
  const CliResult b = run_eitstream(fmt::format(
      "model build --dim 3 --rings 2 --electrodes 16 --h0 0.45 --pattern square "
      "--drive-distance 5 --measure-step 5 --algorithm jac --voxels 8x6x4 --voxel-samples 2 "
      "-o {}",
      out.string()));
  INFO(b.output);
  REQUIRE(b.code == 0);
  CHECK(contains(b.output, "8 × 6 × 4 (nx × ny × nz), 2³ samples per voxel"));
  const Model m = load_model(out);
  const auto& g = std::get<GridGeometry>(m.geometry);
  CHECK(g.nx == 8);
  CHECK(g.ny == 6);
  CHECK(g.nz == 4);
  CHECK(m.H.rows() == 8 * 6 * 4);
  CHECK(g.z0 == doctest::Approx(0.125));  // height 1 in 4 planes
  // square, 2 rings of 8: path 0, 8, 9, 1, 2, 10, 11, 3, …; drive 0 = positions 0 → 5.
  CHECK(m.protocol.drives[0].source == 0);
  CHECK(m.protocol.drives[0].sink == 10);
  CHECK(m.protocol.drives[1].source == 8);
  CHECK(m.protocol.drives[1].sink == 11);
  CHECK(contains(m.parameters_json, R"("pattern": "square")"));
  CHECK(contains(m.parameters_json, R"("voxels": {"nx": 8, "ny": 6, "nz": 4, "samples": 2)"));
  const CliResult i = run_eitstream(fmt::format("model info {}", out.string()));
  CHECK(contains(i.output, "voxel grid: 8 × 6 × 4 (nx × ny × nz)"));
  fs::remove(out);

  const CliResult flat = run_eitstream(
      fmt::format("model build --algorithm jac --voxels 8x8x2 -o {}", temp3d("f.h5").string()));
  CHECK(flat.code != 0);
  CHECK(contains(flat.output, "voxel output needs a 3-D mesh"));
  const CliResult bad = run_eitstream(fmt::format(
      "model build --dim 3 --h0 0.5 --algorithm jac --voxels 8x8 -o {}", temp3d("b.h5").string()));
  CHECK(bad.code != 0);
  CHECK(contains(bad.output, "NXxNYxNZ"));
}

TEST_CASE("model build --dim 3 --mesher extruded: recorded in the parameters, discs refused") {
  if (skip_without_gmsh("model build --dim 3 --mesher extruded")) return;
  const fs::path out = temp3d("ext.h5");
  const CliResult b = run_eitstream(fmt::format(
      "model build --dim 3 --mesh circle --height 1 --rings 2 --electrodes 16 --h0 0.35 "
      "--mesher extruded --algorithm jac --pattern planar -o {}",
      out.string()));
  INFO(b.output);
  REQUIRE(b.code == 0);
  CHECK(contains(b.output, "2 ring(s), extruded mesher"));
  const Model m = load_model(out);
  CHECK(contains(m.parameters_json, R"("mesher": "extruded")"));
  const CliResult i = run_eitstream(fmt::format("model info {}", out.string()));
  CHECK(contains(i.output, R"("mesher": "extruded")"));
  fs::remove(out);
  // The default (Delaunay) leaves the parameters as they were, so its model ids stay.
  const fs::path del = temp3d("del.h5");
  const CliResult d = run_eitstream(fmt::format(
      "model build --dim 3 --rings 2 --electrodes 16 --h0 0.45 --algorithm jac -o {}",
      del.string()));
  REQUIRE(d.code == 0);
  CHECK(!contains(load_model(del).parameters_json, "mesher"));
  fs::remove(del);
  const CliResult disc = run_eitstream(fmt::format(
      "model build --dim 3 --h0 0.35 --mesher extruded --electrode-model complete "
      "--electrode-shape circle --electrode-width 0.1 --algorithm jac -o {}",
      temp3d("c.h5").string()));
  CHECK(disc.code != 0);
  CHECK(contains(disc.output, "need the Delaunay mesher"));
  CHECK(contains(run_eitstream("model build --help").output, "--mesher"));
}
