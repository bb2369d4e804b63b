// Voxel output for 3-D models (voxel_grid.hpp): point location, the map P against a brute-force
// reference, the mask against the cylinder, a phantom inclusion in the right voxels, and the
// Model file round trip of a voxel grid.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <Eigen/Dense>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/jac.hpp"
#include "eit/recon/mesh_generator_3d.hpp"
#include "eit/recon/model_file.hpp"
#include "eit/recon/protocol_rings.hpp"
#include "eit/recon/voxel_grid.hpp"
#include "gmsh_skip.hpp"

using namespace eit::recon;
namespace fs = std::filesystem;
using Points = Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor>;

namespace {

// Two rings of 8 on the unit cylinder of height 1, coarse (about a thousand tetrahedra).
const Mesh& cylinder() {
  static const Mesh mesh = [] {
    Mesh3dOptions o;
    o.n_electrodes = 16;
    o.n_rings = 2;
    o.h0 = 0.3;
    return generate_mesh_3d(o);
  }();
  return mesh;
}

MeshGeometry geometry_of(const Mesh& m, MeshGeometry::OutputOn on) {
  MeshGeometry g;
  g.nodes = m.nodes;
  g.elements = m.elements;
  g.electrode_nodes = m.electrode_nodes;
  g.output_on = on;
  return g;
}

// The tetrahedron holding p by testing every one (no binning), −1 when none.
int brute_force_locate(const Mesh& m, const Eigen::Vector3d& p) {
  for (int e = 0; e < m.n_elems(); ++e) {
    Eigen::Matrix3d T;
    const Eigen::Vector3d v0 = m.nodes.row(m.elements(e, 0)).transpose();
    for (int k = 0; k < 3; ++k) T.col(k) = m.nodes.row(m.elements(e, k + 1)).transpose() - v0;
    const Eigen::Vector3d l = T.inverse() * (p - v0);
    if (l.minCoeff() >= -1e-10 && l.sum() <= 1 + 1e-10) return e;
  }
  return -1;
}

Eigen::Vector3d voxel_centre(const GridGeometry& g, int x, int y, int z) {
  return {g.x0 + x * g.dx, g.y0 + y * g.dy, g.z0 + z * g.dz};
}

}  // namespace

TEST_CASE("voxel spec parsing and the grid over the bounding box") {
  const VoxelGridOptions o = parse_voxel_spec("32x16x4");
  CHECK(o.nx == 32);
  CHECK(o.ny == 16);
  CHECK(o.nz == 4);
  for (const char* bad : {"32x32", "32x32x0", "axbxc", "32x32x4x2", "2000x1x1", "32x32x"})
    CHECK_THROWS_WITH_AS(parse_voxel_spec(bad), doctest::Contains("NXxNYxNZ"),
                         std::invalid_argument);
  NodeMatrix box(2, 3);
  box << -1, -2, 0, 1, 2, 1;
  const GridGeometry g = voxel_grid_over(box, {4, 8, 2, 1});
  CHECK(g.dx == doctest::Approx(0.5));
  CHECK(g.dy == doctest::Approx(0.5));
  CHECK(g.dz == doctest::Approx(0.5));
  CHECK(g.x0 == doctest::Approx(-0.75));  // first centre half a voxel in from the box
  CHECK(g.y0 == doctest::Approx(-1.75));
  CHECK(g.z0 == doctest::Approx(0.25));
  CHECK(g.n_pixels() == 64);
}

TEST_CASE("point location agrees with testing every tetrahedron, outside points get -1") {
  if (eit::test::skip_without_gmsh("voxel point location on a generated cylinder")) return;
  const Mesh& m = cylinder();
  Points p(7, 3);
  p << 0, 0, 0.5, 0.5, -0.3, 0.2, -0.7, 0.1, 0.9, 0.1, 0.69, 0.33, 1.2, 0, 0.5, 0, 0, 1.3, 0.75,
      0.75, 0.5;  // the last three are outside the unit cylinder
  const PointLocation at = locate_points(m.nodes, m.elements, p);
  for (Eigen::Index i = 0; i < p.rows(); ++i) {
    INFO("point " << i);
    const int e = at.element[static_cast<size_t>(i)];
    if (i >= 4) {
      CHECK(e == -1);
      continue;
    }
    REQUIRE(e >= 0);
    CHECK(brute_force_locate(m, p.row(i).transpose()) >= 0);
    // Barycentric weights reproduce the point.
    Eigen::Vector3d back = Eigen::Vector3d::Zero();
    for (int k = 0; k < 4; ++k)
      back +=
          at.weights[static_cast<size_t>(4 * i + k)] * m.nodes.row(m.elements(e, k)).transpose();
    CHECK((back - p.row(i).transpose()).norm() < 1e-12);
  }
}

TEST_CASE("the voxel mask matches the cylinder, plane by plane") {
  if (eit::test::skip_without_gmsh("voxel mask of a generated cylinder")) return;
  const Mesh& m = cylinder();
  const VoxelMap map =
      make_voxel_map(geometry_of(m, MeshGeometry::OutputOn::kElements), {16, 16, 4, 1});
  const GridGeometry& g = map.grid;
  REQUIRE(g.mask.size() == 16u * 16u * 4u);
  CHECK(g.dz == doctest::Approx(0.25));
  CHECK(g.z0 == doctest::Approx(0.125));
  // The mesh's side is a polygon inscribed in the unit circle (edges ≤ h0 = 0.3: sagitta < 0.012).
  int inside = 0, undecided = 0;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const Eigen::Vector3d c = voxel_centre(g, x, y, z);
        const double r = std::hypot(c.x(), c.y());
        const uint8_t mask = g.mask[static_cast<size_t>((z * g.ny + y) * g.nx + x)];
        if (r < 0.985) {
          CHECK(mask == 0);
          ++inside;
        } else if (r > 1.0) {
          CHECK(mask == 1);
        } else {
          ++undecided;
        }
      }
  CHECK(inside > 4 * 150);     // about π · 8² ≈ 200 per plane
  CHECK(undecided <= 4 * 16);  // the thin ring 0.985 ≤ r ≤ 1 (16 per plane on this grid)
  // Masked voxels have empty rows in P.
  for (size_t v = 0; v < g.mask.size(); ++v)
    if (g.mask[v]) CHECK(map.P.row(static_cast<Eigen::Index>(v)).nonZeros() == 0);
}

TEST_CASE("voxel image = per-tetrahedron image mapped: the centre's tetrahedron (S = 1)") {
  if (eit::test::skip_without_gmsh("voxel image of a generated cylinder (S = 1)")) return;
  const Mesh& m = cylinder();
  const VoxelMap map =
      make_voxel_map(geometry_of(m, MeshGeometry::OutputOn::kElements), {8, 8, 3, 1});
  Eigen::VectorXd per_tet(m.n_elems());
  for (int e = 0; e < m.n_elems(); ++e) per_tet[e] = std::sin(0.37 * e) + 2.0;
  const Eigen::VectorXd vox = map.P * per_tet;
  const GridGeometry& g = map.grid;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const auto v = static_cast<size_t>((z * g.ny + y) * g.nx + x);
        const int e = brute_force_locate(m, voxel_centre(g, x, y, z));
        CHECK((e < 0) == (g.mask[v] == 1));
        // The single tetrahedron P picks must hold the centre (on a shared face either one may),
        // and the voxel takes its value.
        if (e >= 0) {
          INFO("voxel " << v);
          const auto row = static_cast<Eigen::Index>(v);
          REQUIRE(map.P.row(row).nonZeros() == 1);
          const Eigen::SparseMatrix<double, Eigen::RowMajor>::InnerIterator it(map.P, row);
          const int chosen = static_cast<int>(it.col());
          CHECK(it.value() == 1.0);
          Eigen::Matrix3d T;
          const Eigen::Vector3d v0 = m.nodes.row(m.elements(chosen, 0)).transpose();
          for (int k = 0; k < 3; ++k)
            T.col(k) = m.nodes.row(m.elements(chosen, k + 1)).transpose() - v0;
          const Eigen::Vector3d l = T.inverse() * (voxel_centre(g, x, y, z) - v0);
          CHECK(l.minCoeff() >= -1e-9);
          CHECK(l.sum() <= 1 + 1e-9);
          CHECK(vox[row] == per_tet[chosen]);
        }
      }
}

TEST_CASE("voxel image = volume average over S^3 samples, against a brute-force reference") {
  if (eit::test::skip_without_gmsh("voxel image of a generated cylinder (S^3 samples)")) return;
  const Mesh& m = cylinder();
  const int S = 3;
  const VoxelMap map =
      make_voxel_map(geometry_of(m, MeshGeometry::OutputOn::kElements), {6, 6, 2, S});
  Eigen::VectorXd per_tet(m.n_elems());
  for (int e = 0; e < m.n_elems(); ++e) per_tet[e] = std::cos(0.11 * e * e) + 0.1 * e;
  const Eigen::VectorXd vox = map.P * per_tet;
  const GridGeometry& g = map.grid;
  int averaged = 0;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const auto v = static_cast<size_t>((z * g.ny + y) * g.nx + x);
        if (g.mask[v]) continue;
        const Eigen::Vector3d c = voxel_centre(g, x, y, z);
        double sum = 0;
        int n = 0;
        for (int a = 0; a < S; ++a)
          for (int b = 0; b < S; ++b)
            for (int d = 0; d < S; ++d) {
              const Eigen::Vector3d p =
                  c + Eigen::Vector3d(((d + 0.5) / S - 0.5) * g.dx, ((b + 0.5) / S - 0.5) * g.dy,
                                      ((a + 0.5) / S - 0.5) * g.dz);
              const int e = brute_force_locate(m, p);
              if (e < 0) continue;
              sum += per_tet[e];
              ++n;
            }
        if (n == 0) continue;
        ++averaged;
        INFO("voxel " << v);
        CHECK(vox[static_cast<Eigen::Index>(v)] == doctest::Approx(sum / n).epsilon(1e-12));
      }
  CHECK(averaged > 20);
}

TEST_CASE("node output: a linear field is interpolated exactly at interior voxels") {
  if (eit::test::skip_without_gmsh("voxel node output on a generated cylinder")) return;
  const Mesh& m = cylinder();
  const VoxelMap map = make_voxel_map(geometry_of(m, MeshGeometry::OutputOn::kNodes), {8, 8, 4, 2});
  CHECK(map.P.cols() == m.n_nodes());
  Eigen::VectorXd f(m.n_nodes());
  for (int i = 0; i < m.n_nodes(); ++i)
    f[i] = 1 + 2 * m.nodes(i, 0) - m.nodes(i, 1) + 3 * m.nodes(i, 2);
  const Eigen::VectorXd vox = map.P * f;
  const GridGeometry& g = map.grid;
  int checked = 0;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const Eigen::Vector3d c = voxel_centre(g, x, y, z);
        // Whole voxel well inside: every sample inside, so the mean of f is f(centre).
        if (std::hypot(std::abs(c.x()) + g.dx / 2, std::abs(c.y()) + g.dy / 2) > 0.95) continue;
        ++checked;
        const double want = 1 + 2 * c.x() - c.y() + 3 * c.z();
        CHECK(vox[(z * g.ny + y) * g.nx + x] == doctest::Approx(want).epsilon(1e-10));
      }
  CHECK(checked > 40);
}

TEST_CASE("a phantom inclusion reconstructed by JAC lands in the right voxels, file round trip") {
  if (eit::test::skip_without_gmsh("voxel JAC phantom on a generated cylinder")) return;
  const Mesh& m = cylinder();
  RingProtocolOptions po;
  po.base.n_electrodes = 16;
  po.n_rings = 2;
  po.pattern = RingPattern::kPlanar;
  ForwardModel fwd(m, make_ring_protocol(po));
  // Inclusion: conductivity 2 in a ball at (0.5, 0, 0.5) (right of centre, between the rings).
  const Eigen::Vector3d at(0.5, 0.0, 0.5);
  Eigen::VectorXd perm = Eigen::VectorXd::Ones(m.n_elems());
  for (int e = 0; e < m.n_elems(); ++e) {
    Eigen::Vector3d c = Eigen::Vector3d::Zero();
    for (int k = 0; k < 4; ++k) c += m.nodes.row(m.elements(e, k)).transpose() / 4;
    if ((c - at).norm() < 0.3) perm[e] = 2.0;
  }
  const Eigen::VectorXd v0 = fwd.solve(), v1 = fwd.solve(perm);
  ReconstructionMatrix rm = build_jac(fwd, {});
  const Eigen::MatrixXf per_tet_H = rm.model.H;
  map_to_voxels(rm, {8, 8, 4, 3});
  const auto& g = std::get<GridGeometry>(rm.model.geometry);
  REQUIRE(rm.model.H.rows() == 8 * 8 * 4);
  const Eigen::VectorXf dv = (v1 - v0).cast<float>();
  const Eigen::VectorXf img = rm.model.H * dv;
  // The streaming H is P applied to the per-tetrahedron streaming H.
  const VoxelMap map =
      make_voxel_map(geometry_of(m, MeshGeometry::OutputOn::kElements), {8, 8, 4, 3});
  const Eigen::VectorXf mapped = (map.P.cast<float>() * per_tet_H) * dv;
  CHECK((img - mapped).norm() <= 1e-4f * mapped.norm());
  // The strongest voxel (image sign: conductivity up → positive) is near the inclusion.
  Eigen::Index best = 0;
  img.maxCoeff(&best);
  const int bx = static_cast<int>(best % g.nx), by = static_cast<int>((best / g.nx) % g.ny);
  const int bz = static_cast<int>(best / (g.nx * g.ny));
  const Eigen::Vector3d c = voxel_centre(g, bx, by, bz);
  INFO("best voxel " << bx << ", " << by << ", " << bz << " at " << c.transpose());
  CHECK(g.mask[static_cast<size_t>(best)] == 0);
  CHECK(std::hypot(c.x() - at.x(), c.y() - at.y()) < 0.4);
  CHECK(std::abs(c.z() - at.z()) < 0.4);
  // The positive mass sits on the inclusion's side (x > 0).
  double right = 0, left = 0;
  for (Eigen::Index v = 0; v < img.size(); ++v) {
    const double x = g.x0 + static_cast<double>(v % g.nx) * g.dx;
    (x > 0 ? right : left) += std::max(0.0f, img[v]);
  }
  CHECK(right > 2 * left);

  const fs::path file = fs::temp_directory_path() / "eit_voxel_model_test.h5";
  save_model(file, rm.model);
  const Model back = load_model(file);
  const auto& gb = std::get<GridGeometry>(back.geometry);
  CHECK(gb.nz == 4);
  CHECK(gb.z0 == g.z0);
  CHECK(gb.dz == g.dz);
  CHECK(gb.mask == g.mask);
  CHECK(back.id == rm.model.id);
  CHECK(back.H == rm.model.H);
  CHECK(back.parameters_json.find(R"("voxels": {"nx": 8, "ny": 8, "nz": 4, "samples": 3)") !=
        std::string::npos);
  // Changing nz changes the id (the grid is part of the content).
  Model other = rm.model;
  std::get<GridGeometry>(other.geometry).z0 += 0.01;
  CHECK(model_content_hash(other) != rm.model.id);
  fs::remove(file);
}

TEST_CASE("voxel output is refused for 2-D meshes and bad sample counts") {
  MeshGeometry flat;
  flat.nodes.resize(3, 2);
  flat.nodes << 0, 0, 1, 0, 0, 1;
  flat.elements.resize(1, 3);
  flat.elements << 0, 1, 2;
  CHECK_THROWS_WITH_AS(make_voxel_map(flat, {}), doctest::Contains("tetrahedra"),
                       std::invalid_argument);
  ReconstructionMatrix rm;
  rm.model.geometry = flat;
  CHECK_THROWS_WITH_AS(map_to_voxels(rm, {}), doctest::Contains("tetrahedral"),
                       std::invalid_argument);
  if (eit::test::skip_without_gmsh("voxel sample counts on a generated cylinder")) return;
  CHECK_THROWS_WITH_AS(
      make_voxel_map(geometry_of(cylinder(), MeshGeometry::OutputOn::kElements), {4, 4, 2, 9}),
      doctest::Contains("samples"), std::invalid_argument);
}
