// `eitstream model build --dim 3 --algorithm greit` (the voxel GREIT, greit_3d.hpp) through the
// real binary: the voxel grid and parameters in the Model file, model info, option errors.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "cli_run.hpp"
#include "eit/recon/model_file.hpp"
#include "gmsh_skip.hpp"
#include "test_data.hpp"

namespace fs = std::filesystem;
using namespace eit::recon;
using namespace eit::test;

TEST_CASE("model build --dim 3 --algorithm greit writes a voxel-grid GREIT model") {
  if (skip_without_gmsh("model build --dim 3 --algorithm greit")) return;
  const fs::path out = cli_temp_path("eit_cli_greit3d", "g.h5");
  const std::string base =
      "model build --dim 3 --rings 2 --electrodes 16 --h0 0.45 --algorithm greit";
  const CliResult b = run_eitstream(
      fmt::format("{} --voxels 8x8x4 --targets 200 --target-size 0.06 -o {}", base, out.string()));
  INFO(b.output);
  REQUIRE(b.code == 0);
  CHECK(contains(b.output, "greit H 256 × 208"));
  const Model m = load_model(out);
  const auto& g = std::get<GridGeometry>(m.geometry);
  CHECK(g.nx == 8);
  CHECK(g.ny == 8);
  CHECK(g.nz == 4);
  CHECK(m.H.rows() == 8 * 8 * 4);
  CHECK(
      contains(m.parameters_json, R"("voxels": {"nx": 8, "ny": 8, "nz": 4}, "train": "spheres")"));
  CHECK(contains(m.parameters_json, R"("targets": 200, "target_size": 0.06)"));
  const CliResult i = run_eitstream(fmt::format("model info {}", out.string()));
  CHECK(contains(i.output, "voxel grid: 8 × 8 × 4 (nx × ny × nz)"));
  fs::remove(out);

  const CliResult size =
      run_eitstream(fmt::format("{} --target-size 0.7 -o {}", base, out.string()));
  CHECK(size.code != 0);
  CHECK(contains(size.output, "--target-size 0.7"));
  const CliResult train = run_eitstream(fmt::format("{} --train cubes -o {}", base, out.string()));
  CHECK(train.code != 0);
  CHECK(contains(train.output, "--train"));
  const CliResult none = run_eitstream(fmt::format("{} --targets 0 -o {}", base, out.string()));
  CHECK(none.code != 0);
  CHECK(contains(none.output, "--targets"));
  const CliResult help = run_eitstream("model build --help");
  CHECK(contains(help.output, "--target-size"));
  CHECK(contains(help.output, "3-D GREIT training"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("model build refuses the 3-D GREIT's training options for other algorithms and 2-D") {
  const fs::path out = cli_temp_path("eit_cli_greit3d_opts", "m.h5");
  const CliResult jac = run_eitstream(
      fmt::format("model build --algorithm jac --train elements -o {}", out.string()));
  INFO(jac.output);
  CHECK(jac.code != 0);
  CHECK(contains(jac.output, "--train: training options of the 3-D GREIT"));
  CHECK(contains(jac.output, "not of --algorithm jac"));
  const CliResult bp = run_eitstream(
      fmt::format("model build --algorithm bp --targets 50 --target-size 0.1 -o {}", out.string()));
  CHECK(bp.code != 0);
  CHECK(contains(bp.output, "--targets, --target-size: training options"));
  if (!skip_without_gmsh("model build --algorithm greit (2-D) --targets")) {
    const CliResult greit_2d = run_eitstream(
        fmt::format("model build --algorithm greit --targets 50 -o {}", out.string()));
    INFO(greit_2d.output);
    CHECK(greit_2d.code != 0);
    CHECK(contains(greit_2d.output, "the 2-D GREIT (a 2-D mesh) has --grid"));
  }
  CHECK_FALSE(fs::exists(out));
}
