// 3-D GREIT on a voxel grid (greit_3d.hpp): spherical inclusions found where they are (simulated
// by the nonlinear forward model, not by J·x), the extruded 2-D case against the 2-D GREIT, the
// matrix shape and mask, determinism, training targets and option errors.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include <Eigen/Dense>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/greit.hpp"
#include "eit/recon/greit_3d.hpp"
#include "eit/recon/mesh_generator.hpp"
#include "eit/recon/mesh_generator_3d.hpp"
#include "eit/recon/protocol_rings.hpp"
#include "eit/recon/voxel_grid.hpp"
#include "gmsh_skip.hpp"

using namespace eit::recon;
using eit::test::skip_without_gmsh;

namespace {

// Two rings of 8 point electrodes on the unit cylinder of height 1 (h0 = 0.2).
const Mesh& two_ring_cylinder() {
  static const Mesh mesh = [] {
    Mesh3dOptions o;
    o.n_electrodes = 16;
    o.n_rings = 2;
    o.h0 = 0.2;
    return generate_mesh_3d(o);
  }();
  return mesh;
}

Greit3dOptions small_grid() {
  Greit3dOptions o;
  o.grid = {16, 16, 4, 1};
  o.n_targets = 400;
  return o;
}

// Conductivity 1 + contrast in the elements whose centroid lies within radius of centre (an
// independent phantom: not the quadrature the builder trains with).
Eigen::VectorXd ball_phantom(const Mesh& m, const Eigen::Vector3d& centre, double radius,
                             double contrast) {
  Eigen::VectorXd perm = Eigen::VectorXd::Ones(m.n_elems());
  for (int e = 0; e < m.n_elems(); ++e) {
    Eigen::Vector3d c = Eigen::Vector3d::Zero();
    for (int k = 0; k < 4; ++k) c += m.nodes.row(m.elements(e, k)).transpose() / 4.0;
    if ((c - centre).norm() < radius) perm(e) += contrast;
  }
  return perm;
}

Eigen::VectorXf image_of(const Model& model, const Eigen::VectorXd& dv) {
  return model.H * dv.cast<float>();
}

}  // namespace

TEST_CASE("3-D GREIT: H maps measurements to the voxel grid, masked voxels have zero rows") {
  if (skip_without_gmsh("3-D GREIT shape")) return;
  const Mesh& m = two_ring_cylinder();
  ForwardModel f(m, make_protocol({.n_electrodes = 16}));
  const ReconstructionMatrix rm = build_greit_3d(f, small_grid());
  const auto* g = std::get_if<GridGeometry>(&rm.model.geometry);
  REQUIRE(g);
  CHECK(g->nx == 16);
  CHECK(g->ny == 16);
  CHECK(g->nz == 4);
  CHECK(rm.H.rows() == 16 * 16 * 4);
  CHECK(rm.H.cols() == 16 * 13);
  CHECK(rm.model.H.isApprox((-rm.H).cast<float>()));
  // The mask is the voxel-output mask of the same grid (voxel centre outside every tetrahedron).
  MeshGeometry shape;
  shape.nodes = m.nodes;
  shape.elements = m.elements;
  const GridGeometry expected = make_voxel_map(shape, {16, 16, 4, 1}).grid;
  REQUIRE(g->mask == expected.mask);
  int masked = 0;
  for (size_t v = 0; v < g->mask.size(); ++v) {
    if (!g->mask[v]) continue;
    ++masked;
    CHECK(rm.H.row(static_cast<Eigen::Index>(v)).norm() == 0.0);
  }
  CHECK(masked > 0);
  CHECK(rm.H.norm() > 0);
  CHECK(rm.model.parameters_json.find("\"targets\": 400") != std::string::npos);
}

TEST_CASE("3-D GREIT: a spherical inclusion peaks within a voxel or two of its centre") {
  if (skip_without_gmsh("3-D GREIT inclusions")) return;
  const Mesh& m = two_ring_cylinder();
  ForwardModel f(m, make_protocol({.n_electrodes = 16}));
  const ReconstructionMatrix rm = build_greit_3d(f, small_grid());
  const auto& g = std::get<GridGeometry>(rm.model.geometry);
  const Eigen::VectorXd v0 = f.solve();
  const Eigen::Vector3d centres[] = {
      {0.5, 0.0, 0.3}, {-0.45, 0.4, 0.7}, {0.0, -0.55, 0.5}, {0.45, 0.45, 0.5}, {0.0, 0.0, 0.5}};
  for (const Eigen::Vector3d& c : centres) {
    for (const double contrast : {1.0, -0.5}) {
      INFO("inclusion at (" << c.transpose() << "), contrast " << contrast);
      const Eigen::VectorXd v1 = f.solve(ball_phantom(m, c, 0.2, contrast));
      Eigen::VectorXf img = image_of(rm.model, v1 - v0) * static_cast<float>(contrast > 0 ? 1 : -1);
      for (size_t v = 0; v < g.mask.size(); ++v)
        if (g.mask[v]) img(static_cast<Eigen::Index>(v)) = -INFINITY;
      Eigen::Index peak = 0;
      img.maxCoeff(&peak);
      const int x = static_cast<int>(peak % g.nx), y = static_cast<int>(peak / g.nx % g.ny),
                z = static_cast<int>(peak / (g.nx * g.ny));
      const double ex = (g.x0 + x * g.dx - c.x()) / g.dx, ey = (g.y0 + y * g.dy - c.y()) / g.dy,
                   ez = (g.z0 + z * g.dz - c.z()) / g.dz;
      MESSAGE("peak offset in voxels (" << ex << ", " << ey << ", " << ez << ")");
      CHECK(img(peak) > 0);  // the right sign: the peak of the signed image is the extremum
      CHECK(std::abs(ex) <= 2.0);
      CHECK(std::abs(ey) <= 2.0);
      CHECK(std::abs(ez) <= 1.5);
    }
  }
}

TEST_CASE("3-D GREIT on an extruded 2-D model (full-height electrodes) images as the 2-D GREIT") {
  if (skip_without_gmsh("3-D GREIT against 2-D")) return;
  const double height = 0.4, width = 0.25;
  Mesh3dOptions o3;
  o3.n_electrodes = 16;
  o3.height = height;
  o3.h0 = 0.12;
  o3.h_electrode = 0.08;
  o3.electrode_shape = Mesh3dOptions::ElectrodeShape::kRectangle;
  o3.electrode_width = width;
  o3.electrode_height = height;
  const Mesh m3 = generate_mesh_3d(o3);
  MeshOptions o2;
  o2.h0 = 0.05;
  o2.electrode_width = width;
  const Mesh m2 = generate_mesh(o2);
  ForwardOptions cem;
  cem.electrodes = ForwardOptions::Electrodes::kComplete;
  cem.contact_impedance = 0.05;
  cem.electrode_width = width;
  const Protocol p = make_protocol({.n_electrodes = 16});
  ForwardModel f3(m3, p, cem), f2(m2, p, cem);

  // pyEIT's per-element training on voxels; the same desired-image profile in model units (d_max
  // is the largest centroid–grid distance: about the box diagonal, with the height in 3-D).
  const double d2 = std::sqrt(8.0), d3 = std::sqrt(8.0 + height * height);
  GreitOptions g2;  // pyEIT's defaults: n = 32, ratio 0.1, s 20
  Greit3dOptions g3;
  g3.grid = {32, 32, 3, 1};
  g3.train = Greit3dOptions::Train::kElements;
  g3.p = g2.p;
  g3.lambda = g2.lambda;
  g3.ratio = g2.ratio * d2 / d3;
  g3.s = g2.s * d3 / d2;
  const Model r2 = build_greit(f2, g2).model, r3 = build_greit_3d(f3, g3).model;

  // A full-height column of radius 0.2 (conductivity 2) and the same disc in 2-D.
  const Eigen::Vector2d at(0.35, 0.25);
  auto column = [&](const Mesh& m) {
    Eigen::VectorXd perm = Eigen::VectorXd::Ones(m.n_elems());
    const int k = m.nodes_per_element();
    for (int e = 0; e < m.n_elems(); ++e) {
      Eigen::Vector2d c = Eigen::Vector2d::Zero();
      for (int j = 0; j < k; ++j) c += m.nodes.row(m.elements(e, j)).head<2>().transpose() / k;
      if ((c - at).norm() < 0.2) perm(e) = 2.0;
    }
    return perm;
  };
  const Eigen::VectorXf i2 = image_of(r2, f2.solve(column(m2)) - f2.solve());
  const Eigen::VectorXf i3 =
      image_of(r3, f3.solve(column(m3)) - f3.solve()).segment(32 * 32, 32 * 32);
  const auto& mask2 = std::get<GridGeometry>(r2.geometry).mask;
  const auto& mask3 = std::get<GridGeometry>(r3.geometry).mask;
  Eigen::VectorXd a(32 * 32), b(32 * 32);
  Eigen::Index n = 0;
  for (size_t i = 0; i < 32 * 32; ++i)
    if (!mask2[i] && !mask3[32 * 32 + i]) {
      a(n) = i2(static_cast<Eigen::Index>(i));
      b(n++) = i3(static_cast<Eigen::Index>(i));
    }
  REQUIRE(n > 600);
  a = a.head(n).array() - a.head(n).mean();
  b = b.head(n).array() - b.head(n).mean();
  const double corr = a.dot(b) / (a.norm() * b.norm());
  MESSAGE("middle plane of the 3-D GREIT against the 2-D GREIT: correlation " << corr << " over "
                                                                              << n << " pixels");
  CHECK(corr >= 0.9);
}

TEST_CASE("3-D GREIT is deterministic and its training spheres lie inside the mesh") {
  if (skip_without_gmsh("3-D GREIT determinism")) return;
  const Mesh& m = two_ring_cylinder();
  ForwardModel f(m, make_protocol({.n_electrodes = 16}));
  Greit3dOptions o = small_grid();
  o.grid = {8, 8, 3, 1};
  const ReconstructionMatrix a = build_greit_3d(f, o), b = build_greit_3d(f, o);
  CHECK((a.H.array() == b.H.array()).all());
  const GreitTargets t = greit_training_targets(m, f.element_areas(), 300, 0.05);
  REQUIRE(t.centres.rows() == 300);
  CHECK(t.radius == doctest::Approx(0.1));  // 0.05 × the box's largest extent (2)
  CHECK(t.X.cols() == 300);
  for (Eigen::Index k = 0; k < t.centres.rows(); ++k) {
    CHECK(t.centres.row(k).head<2>().norm() <= 1.0);
    CHECK(t.centres(k, 2) >= 0.0);
    CHECK(t.centres(k, 2) <= 1.0);
  }
  // Each sphere's quadrature keeps its volume × contrast where it lies wholly inside.
  const Eigen::VectorXd x = sphere_contrast(m, f.element_areas(), {0.1, -0.2, 0.5}, 0.15);
  CHECK(x.dot(f.element_areas()) == doctest::Approx(4.0 / 3.0 * M_PI * std::pow(0.15, 3)));
  // Spread through the volume: every octant-like region (upper/lower half × 4 quadrants) holds
  // some.
  int counts[8] = {};
  for (Eigen::Index k = 0; k < t.centres.rows(); ++k)
    ++counts[(t.centres(k, 0) > 0) + 2 * (t.centres(k, 1) > 0) + 4 * (t.centres(k, 2) > 0.5)];
  for (int c : counts) CHECK(c > 20);
}

TEST_CASE("3-D GREIT option errors name the option") {
  if (skip_without_gmsh("3-D GREIT option errors")) return;
  const Mesh& m = two_ring_cylinder();
  ForwardModel f(m, make_protocol({.n_electrodes = 16}));
  auto with = [](auto edit) {
    Greit3dOptions o;
    o.grid = {4, 4, 2, 1};
    o.n_targets = 20;
    edit(o);
    return o;
  };
  CHECK_THROWS_WITH_AS(build_greit_3d(f, with([](auto& o) { o.lambda = 0; })),
                       doctest::Contains("lambda"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(build_greit_3d(f, with([](auto& o) { o.p = -1; })),
                       doctest::Contains("p -1"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(build_greit_3d(f, with([](auto& o) { o.ratio = 0; })),
                       doctest::Contains("ratio"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(build_greit_3d(f, with([](auto& o) { o.n_targets = 0; })),
                       doctest::Contains("training targets"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(build_greit_3d(f, with([](auto& o) { o.target_size = 0.6; })),
                       doctest::Contains("target size"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(build_greit_3d(f, with([](auto& o) { o.grid.nz = 0; })),
                       doctest::Contains("positive sizes"), std::invalid_argument);
  MeshOptions o2;
  o2.h0 = 0.2;
  ForwardModel f2(generate_mesh(o2), make_protocol({.n_electrodes = 16}));
  CHECK_THROWS_WITH_AS(build_greit_3d(f2, with([](auto&) {})), doctest::Contains("tetrahedra"),
                       std::invalid_argument);
}
