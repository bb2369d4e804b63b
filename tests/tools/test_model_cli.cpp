// Drives the real `eitstream model` binary (EITSTREAM_BIN) and checks what it writes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
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

fs::path temp_path(const std::string& name) { return cli_temp_path("eit_cli", name); }

// A float32 .npy matrix of `rows` × `cols` holding 0, 1, 2, … in row-major order.
void write_npy_matrix(const fs::path& path, int rows, int cols) {
  std::string header =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}", rows, cols);
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.write(reinterpret_cast<const char*>(&len), 2);
  f << header;
  for (int i = 0; i < rows * cols; ++i) {
    const float v = static_cast<float>(i);
    f.write(reinterpret_cast<const char*>(&v), 4);
  }
}

}  // namespace

TEST_CASE("model build writes a GREIT model and model info describes it") {
  if (skip_without_gmsh("model build circle")) return;
  const fs::path out = temp_path("greit.h5");
  const CliResult b =
      run_eitstream(fmt::format("model build --mesh circle --h0 0.15 -o {}", out.string()));
  INFO(b.output);
  REQUIRE(b.code == 0);
  for (const char* step : {"mesh", "forward", "jacobian", "matrix", "save", "total"})
    CHECK(contains(b.output, step));
  const Model m = load_model(out);
  CHECK(m.H.rows() == 1024);
  CHECK(m.H.cols() == 208);
  CHECK(m.algorithm == "greit");
  const CliResult i = run_eitstream(fmt::format("model info {}", out.string()));
  INFO(i.output);
  CHECK(i.code == 0);
  CHECK(contains(i.output, m.id));
  CHECK(contains(i.output, "1024 × 208"));
  CHECK(contains(i.output, "grid: 32 × 32"));
  CHECK(contains(i.output, "16 electrodes, drive distance 1"));
  fs::remove(out);
}

TEST_CASE("model build refuses a Jacobian that cannot fit in memory, before building it") {
  if (skip_without_gmsh("model build 1024 electrodes")) return;
  // 1024 electrodes (inside the documented 3..1024): 1,045,504 measurements on ~190,000
  // triangles, a Jacobian of ~1.5 TB. It died with std::bad_alloc after ~21 s and ~5 GB.
  const fs::path out = temp_path("e1024.h5");
  const CliResult b =
      run_eitstream(fmt::format("model build --electrodes 1024 -o {}", out.string()));
  INFO(b.output);
  CHECK(b.code != 0);
  CHECK(contains(b.output, "eitstream: the Jacobian needs "));
  CHECK(contains(b.output, "1045504 measurements × "));
  CHECK(contains(b.output, "GiB available; use fewer electrodes"));
  CHECK_FALSE(contains(b.output, "jacobian "));  // refused before the step
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("model build checks its output folder and --lambda first, and never leaves half a file") {
  const fs::path missing = temp_path("no_such_folder") / "m.h5";
  const CliResult folder = run_eitstream(fmt::format("model build -o {}", missing.string()));
  CHECK(folder.code != 0);
  CHECK(
      contains(folder.output, "the folder " + missing.parent_path().string() + " does not exist"));
  CHECK_FALSE(contains(folder.output, "mesh "));  // before the first step
  const CliResult lambda = run_eitstream(
      fmt::format("model build --algorithm jac --lambda 0 -o {}", temp_path("l0.h5").string()));
  CHECK(lambda.code != 0);
  CHECK(contains(lambda.output, "--lambda 0: expected a regularisation > 0 for --algorithm jac"));
  CHECK_FALSE(contains(lambda.output, "mesh "));

  // A save that fails part-way (here a 100 KiB file size limit; a full disk alike) leaves the
  // earlier model under that name as it was, and no partial file beside it.
  const fs::path out = temp_path("kept.h5");
  fs::remove(out);
  REQUIRE(run_eitstream(fmt::format("model build -o {}", out.string())).code == 0);
  const auto before = fs::file_size(out);
  const std::string cmd = fmt::format(
      "sh -c \"ulimit -f 100; trap '' XFSZ; exec {} model build --grid 64 -o {}\" >/dev/null 2>&1",
      EITSTREAM_BIN, out.string());
  CHECK(std::system(cmd.c_str()) != 0);
  CHECK(fs::file_size(out) == before);
  CHECK(load_model(out).H.rows() == 1024);
  size_t partial = 0;
  for (const auto& e : fs::directory_iterator(out.parent_path()))
    if (e.path().filename().string().rfind(out.filename().string() + ".partial", 0) == 0) ++partial;
  CHECK(partial == 0);
  fs::remove(out);
}

TEST_CASE("model build on pyEIT's CSV mesh gives pyEIT's JAC matrix with the sign folded in") {
  const auto dir = eit::test::shared_data_file("pyeit/h0_0.1/nodes.csv");
  const auto ref = eit::test::shared_data_file("pyeit/h0_0.1/H_jac.csv");
  if (!dir || !ref) return;
  const fs::path out = temp_path("jac.h5");
  const CliResult b = run_eitstream(fmt::format(
      "model build --mesh csv:{} --algorithm jac --prior kotre --p 0.5 --lambda 0.01 -o {}",
      dir->parent_path().string(), out.string()));
  INFO(b.output);
  REQUIRE(b.code == 0);
  const Model m = load_model(out);
  std::ifstream in(*ref);
  double diff2 = 0, ref2 = 0;
  std::string line;
  for (Eigen::Index r = 0; std::getline(in, line); ++r) {
    std::stringstream row(line);
    std::string cell;
    for (Eigen::Index c = 0; std::getline(row, cell, ','); ++c) {
      const double h = std::stod(cell);
      diff2 += (m.H(r, c) + h) * (m.H(r, c) + h);  // model H = −pyEIT H
      ref2 += h * h;
    }
  }
  const double err = std::sqrt(diff2 / ref2);
  MESSAGE("relative Frobenius error against pyEIT H_jac (float32 model): ", err);
  CHECK(err < 1e-6);
  fs::remove(out);
}

TEST_CASE("model build with the complete electrode model on an ellipse succeeds") {
  if (skip_without_gmsh("model build ellipse")) return;
  const fs::path out = temp_path("cem.h5");
  const CliResult b = run_eitstream(fmt::format(
      "model build --mesh ellipse:1.3,1 --h0 0.15 --electrodes 8 --electrode-model complete "
      "--electrode-width 0.2 --algorithm jac --prior tikhonov -o {}",
      out.string()));
  INFO(b.output);
  REQUIRE(b.code == 0);
  CHECK(contains(b.output, "complete electrode model"));
  const Model m = load_model(out);
  CHECK(m.protocol.n_electrodes == 8);
  CHECK(m.H.cols() == 40);
  fs::remove(out);
}

TEST_CASE("model build meshes a polygon outline file and builds back-projection on its nodes") {
  if (skip_without_gmsh("model build polygon")) return;
  const fs::path outline = temp_path("square.txt"), out = temp_path("bp.h5");
  std::ofstream(outline) << "# a square\n-1,-1\n1,-1\n1 1\n-1,1\n";
  const CliResult b =
      run_eitstream(fmt::format("model build --mesh polygon:{} --h0 0.2 --algorithm bp -o {}",
                                outline.string(), out.string()));
  INFO(b.output);
  REQUIRE(b.code == 0);
  const Model m = load_model(out);
  const auto& g = std::get<MeshGeometry>(m.geometry);
  CHECK(g.output_on == MeshGeometry::OutputOn::kNodes);
  CHECK(m.H.rows() == g.nodes.rows());
  CHECK(g.nodes(g.electrode_nodes[0], 0) == doctest::Approx(-1.0));  // 9 o'clock start
  CHECK(g.nodes(g.electrode_nodes[0], 1) == doctest::Approx(0.0));
  const CliResult i = run_eitstream(fmt::format("model info {}", out.string()));
  CHECK(contains(i.output, "output on nodes"));
  // The same square written closed (GeoJSON, shapely): the same model.
  const fs::path closed = temp_path("closed.txt"), out2 = temp_path("bp_closed.h5");
  std::ofstream(closed) << "-1,-1\n1,-1\n1 1\n-1,1\n-1,-1\n";
  const CliResult c =
      run_eitstream(fmt::format("model build --mesh polygon:{} --h0 0.2 --algorithm bp -o {}",
                                closed.string(), out2.string()));
  INFO(c.output);
  REQUIRE(c.code == 0);
  const Model m2 = load_model(out2);
  REQUIRE(m2.H.rows() == m.H.rows());
  CHECK(m2.H.isApprox(m.H));
  fs::remove(outline);
  fs::remove(closed);
  fs::remove(out);
  fs::remove(out2);
}

TEST_CASE("model build reads a Gmsh .msh file with its electrode groups") {
  if (skip_without_gmsh("model build msh")) return;
  MeshOptions o;
  o.h0 = 0.15;
  o.save_msh = temp_path("circle.msh");
  const Mesh mesh = generate_mesh(o);
  const fs::path out = temp_path("msh.h5");
  const CliResult b = run_eitstream(fmt::format("model build --mesh msh:{} --algorithm jac -o {}",
                                                o.save_msh.string(), out.string()));
  INFO(b.output);
  REQUIRE(b.code == 0);
  const Model m = load_model(out);
  const auto& g = std::get<MeshGeometry>(m.geometry);
  CHECK(g.elements.rows() == mesh.n_elems());
  CHECK(m.H.rows() == mesh.n_elems());
  REQUIRE(g.electrode_nodes.size() == 16);
  CHECK(g.nodes(g.electrode_nodes[4], 1) == doctest::Approx(1.0));  // electrode 4 at the top
  fs::remove(o.save_msh);
  fs::remove(out);
}

TEST_CASE("model import unpacks EIDORS' GREIT v1.0 matrix to 1024 x 208") {
  const auto mat = eit::test::shared_data_file("recordings/GREIT_v10_Circ_Matrix.mat");
  if (!mat) return;
  const fs::path out = temp_path("eidors.h5");
  const CliResult r =
      run_eitstream(fmt::format("model import {} -o {}", mat->string(), out.string()));
  INFO(r.output);
  if (contains(r.output, "without libmatio")) {
    eit::test::report_skip("model import .mat", "built without libmatio");
    return;
  }
  REQUIRE(r.code == 0);
  const Model m = load_model(out);
  CHECK(m.H.rows() == 1024);
  CHECK(m.H.cols() == 208);
  CHECK(m.algorithm == "imported");
  CHECK(contains(m.parameters_json, "\"unpacked_eidors_symmetry\":true"));
  fs::remove(out);
}

TEST_CASE("model import reads a .npy matrix with geometry and protocol from flags") {
  // 8 electrodes, adjacent: 40 measurements; a 4 × 4 grid: 16 outputs.
  const fs::path npy = temp_path("h.npy"), out = temp_path("npy.h5");
  write_npy_matrix(npy, 16, 40);
  const CliResult r = run_eitstream(fmt::format(
      "model import {} --electrodes 8 --grid 4 --scale -1 -o {}", npy.string(), out.string()));
  INFO(r.output);
  REQUIRE(r.code == 0);
  const Model m = load_model(out);
  CHECK(m.H(2, 3) == -83.0f);
  CHECK(std::get<GridGeometry>(m.geometry).nx == 4);
  const CliResult bad = run_eitstream(
      fmt::format("model import {} --electrodes 16 --force -o {}", npy.string(), out.string()));
  CHECK(bad.code != 0);
  CHECK(contains(bad.output, "matrix is 16 × 40, expected 1024 × 208"));
  // The model the bad import would have replaced is intact.
  CHECK(load_model(out).H(2, 3) == -83.0f);
  fs::remove(npy);
  fs::remove(out);
}

TEST_CASE("model commands report bad input with the file or argument named") {
  const CliResult missing = run_eitstream("model info /nonexistent/model.h5");
  CHECK(missing.code != 0);
  CHECK(contains(missing.output, "/nonexistent/model.h5: model file not found"));
  const CliResult ellipse =
      run_eitstream(fmt::format("model build --mesh ellipse -o {}", temp_path("x.h5").string()));
  CHECK(ellipse.code != 0);
  CHECK(contains(ellipse.output, "expected ellipse:A,B"));
  const fs::path msh = temp_path("bad.msh");
  std::ofstream(msh) << "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n1\n1 0 zero 0\n$EndNodes\n";
  const CliResult bad = run_eitstream(
      fmt::format("model build --mesh msh:{} -o {}", msh.string(), temp_path("x.h5").string()));
  CHECK(bad.code != 0);
  CHECK(contains(bad.output, "bad.msh:6: $Nodes: y 'zero': expected a number"));
  fs::remove(msh);
}

// model build, import and export replaced an existing file without a word (a hand-made import
// is not rebuilt with a command); they now refuse it before any work, as run and reconstruct do.
TEST_CASE("model build import and export refuse an existing output without --force") {
  const fs::path npy = temp_path("keep.npy"), out = temp_path("keep.h5");
  write_npy_matrix(npy, 16, 40);
  const std::string import_cmd =
      fmt::format("model import {} --electrodes 8 --grid 4 -o {}", npy.string(), out.string());
  REQUIRE(run_eitstream(import_cmd).code == 0);
  const std::string id = load_model(out).id;
  for (const std::string& cmd :
       {import_cmd, fmt::format("model export builtin -o {}", out.string()),
        fmt::format("model build -o {}", out.string())}) {
    const CliResult r = run_eitstream(cmd);
    INFO(cmd << "\n" << r.output);
    CHECK(r.code == 1);
    CHECK(contains(r.output, "the file exists; give --force to replace it"));
    CHECK(load_model(out).id == id);
  }
  const CliResult forced =
      run_eitstream(fmt::format("model export builtin --force -o {}", out.string()));
  INFO(forced.output);
  CHECK(forced.code == 0);
  CHECK(load_model(out).id != id);
  fs::remove(npy);
  fs::remove(out);
}

TEST_CASE("model import says when it used the file's matrix transposed") {
  // 40 × 16: measurements × outputs for 8 electrodes on a 4 × 4 grid.
  const fs::path npy = temp_path("transposed.npy"), out = temp_path("transposed.h5");
  write_npy_matrix(npy, 40, 16);
  const CliResult r = run_eitstream(fmt::format(
      "model import {} --electrodes 8 --grid 4 --force -o {}", npy.string(), out.string()));
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "matrix is 40 × 16 (measurements × outputs): used as 16 × 40"));
  fs::remove(npy);
  fs::remove(out);
}

TEST_CASE("model info of a gn model says it has no matrix instead of an empty one") {
  const fs::path gn = cli_temp_path("modelinfo", "gn.h5");
  fs::remove(gn);
  REQUIRE(run_eitstream(fmt::format("model build --algorithm gn -o {}", gn.string())).code == 0);
  for (const char* quick : {"", "--quick"}) {
    CAPTURE(quick);
    const auto info = run_eitstream(fmt::format("model info {} {}", quick, gn.string()));
    CAPTURE(info.output);
    CHECK(info.code == 0);
    CHECK(contains(info.output, "H          none: a gn model solves each frame by Gauss–Newton"));
    CHECK_FALSE(contains(info.output, "0 × 0"));
    CHECK_FALSE(contains(info.output, "H stats"));
  }
  fs::remove(gn);
}
