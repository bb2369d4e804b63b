#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/layered_circle_mesh.hpp"
#include "eit/recon/mesh_boundary.hpp"
#include "eit/recon/mesh_check.hpp"
#include "eit/recon/mesh_generator.hpp"
#include "eit/recon/outline.hpp"
#include "pyeit_csv.hpp"
#include "test_data.hpp"

using namespace eit::recon;

namespace {

double signed_area2(const Mesh& m, int e) {
  const Eigen::Vector2d a = m.nodes.row(m.elements(e, 0)), b = m.nodes.row(m.elements(e, 1)),
                        c = m.nodes.row(m.elements(e, 2));
  return (b.x() - a.x()) * (c.y() - a.y()) - (b.y() - a.y()) * (c.x() - a.x());
}

double total_area(const Mesh& m) {
  double a = 0;
  for (int e = 0; e < m.n_elems(); ++e) a += 0.5 * signed_area2(m, e);
  return a;
}

// CCW, non-degenerate, every node used, electrodes on the boundary (check_mesh, and our own
// count of the same properties).
void check_valid(const Mesh& m) {
  CHECK_NOTHROW(check_mesh(m));
  std::vector<int> used(m.n_nodes(), 0);
  for (int e = 0; e < m.n_elems(); ++e) {
    CHECK(signed_area2(m, e) > 0);
    for (int i = 0; i < 3; ++i) ++used[m.elements(e, i)];
  }
  CHECK(std::count(used.begin(), used.end(), 0) == 0);
  const auto loop = outer_boundary_loop(m);
  for (int node : m.electrode_nodes) CHECK(std::find(loop.begin(), loop.end(), node) != loop.end());
}

bool skip_without_gmsh() {
  if (mesh_generator_available()) return false;
  eit::test::report_skip("mesh generation", "built without Gmsh");
  return true;
}

}  // namespace

TEST_CASE("circle electrodes sit at pyEIT's (-cos θk, sin θk), clockwise from 9 o'clock") {
  const auto p = electrode_positions(CircleOutline{}, 16);
  REQUIRE(p.size() == 16);
  CHECK(p[0].x() == -1.0);
  CHECK(p[0].y() == 0.0);
  CHECK(p[4].x() == doctest::Approx(0.0));
  CHECK(p[4].y() == doctest::Approx(1.0));
  CHECK(p[8].x() == doctest::Approx(1.0));
  CHECK(p[12].y() == doctest::Approx(-1.0));
}

TEST_CASE("ellipse and polygon electrodes are equally spaced in arc length") {
  const EllipseOutline ellipse{2.0, 1.0};
  const OutlinePath path(ellipse);
  // Ramanujan's approximation of the perimeter, good to ~1e-5 relative for this ellipse.
  const double h = std::pow(1.0 / 3.0, 2);
  const double ramanujan = std::numbers::pi * 3 * (1 + 3 * h / (10 + std::sqrt(4 - 3 * h)));
  CHECK(path.perimeter() == doctest::Approx(ramanujan).epsilon(1e-6));
  const auto p = electrode_positions(ellipse, 8);
  CHECK(p[0].x() == doctest::Approx(-2.0));
  CHECK(p[2].y() == doctest::Approx(1.0));  // top, a quarter of the way round
  CHECK(p[4].x() == doctest::Approx(2.0));  // 3 o'clock
  for (const auto& q : p) CHECK(std::pow(q.x() / 2, 2) + q.y() * q.y() == doctest::Approx(1.0));

  // Square given counter-clockwise: start at (-1, 0), go clockwise (up first).
  const PolygonOutline square{{{-1, -1}, {1, -1}, {1, 1}, {-1, 1}}};
  const auto s = electrode_positions(square, 8);
  CHECK(s[0].x() == doctest::Approx(-1.0));
  CHECK(s[0].y() == doctest::Approx(0.0));
  CHECK(s[1].x() == doctest::Approx(-1.0));
  CHECK(s[1].y() == doctest::Approx(1.0));
  CHECK(s[2].x() == doctest::Approx(0.0));
  CHECK(s[2].y() == doctest::Approx(1.0));
}

TEST_CASE("degenerate outlines are rejected with the reason") {
  CHECK_THROWS_WITH_AS(OutlinePath(CircleOutline{-1}), doctest::Contains("radius -1"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(OutlinePath(PolygonOutline{{{0, 0}, {1, 0}}}), doctest::Contains("2 points"),
                       std::invalid_argument);
  // A bow tie crosses itself.
  CHECK_THROWS_WITH_AS(OutlinePath(PolygonOutline{{{0, 0}, {1, 1}, {1, 0}, {0, 1}}}),
                       doctest::Contains("cross"), std::invalid_argument);
}

TEST_CASE("unit-circle mesh is valid, deterministic and has the electrodes as nodes 0..15") {
  if (skip_without_gmsh()) return;
  const Mesh a = generate_mesh({});
  const Mesh b = generate_mesh({});
  CHECK(a.nodes == b.nodes);
  CHECK(a.elements == b.elements);
  check_valid(a);
  CHECK(total_area(a) == doctest::Approx(std::numbers::pi).epsilon(0.01));
  REQUIRE(a.n_electrodes() == 16);
  const auto expected = electrode_positions(CircleOutline{}, 16);
  for (int k = 0; k < 16; ++k) {
    CHECK(a.electrode_nodes[k] == k);
    CHECK(a.nodes(k, 0) == expected[k].x());
    CHECK(a.nodes(k, 1) == expected[k].y());
  }
  CHECK(a.ref_node == 16);
  // pyEIT's distmesh gives 686 triangles at h0 = 0.1; Gmsh's is of the same density.
  MESSAGE("h0 = 0.1: ", a.n_nodes(), " nodes, ", a.n_elems(), " triangles");
  CHECK(a.n_elems() > 500);
  CHECK(a.n_elems() < 1000);
}

TEST_CASE("node count scales like 1/h0^2") {
  if (skip_without_gmsh()) return;
  MeshOptions o;
  o.h0 = 0.1;
  const Mesh coarse = generate_mesh(o);
  o.h0 = 0.05;
  const Mesh fine = generate_mesh(o);
  const double ratio = static_cast<double>(fine.n_nodes()) / coarse.n_nodes();
  MESSAGE("nodes: ", coarse.n_nodes(), " at h0 0.1, ", fine.n_nodes(), " at h0 0.05");
  CHECK(ratio > 3.3);
  CHECK(ratio < 4.7);
}

TEST_CASE("ellipse and thorax-like polygon meshes are valid with electrodes on the outline") {
  if (skip_without_gmsh()) return;
  MeshOptions o;
  o.outline = EllipseOutline{1.5, 1.0};
  o.n_electrodes = 32;
  o.h0 = 0.08;
  const Mesh e = generate_mesh(o);
  check_valid(e);
  CHECK(total_area(e) == doctest::Approx(std::numbers::pi * 1.5).epsilon(0.01));
  const auto ep = electrode_positions(o.outline, 32);
  for (int k = 0; k < 32; ++k) {
    CHECK(e.nodes(k, 0) == ep[k].x());
    CHECK(e.nodes(k, 1) == ep[k].y());
  }
  // A kidney-shaped (non-convex) contour, like a thorax section with the spine notch at the back.
  PolygonOutline thorax;
  for (int i = 0; i < 40; ++i) {
    const double t = 2 * std::numbers::pi * i / 40;
    const double r =
        1.0 -
        0.25 *
            std::exp(-std::pow(std::remainder(t + std::numbers::pi / 2, 2 * std::numbers::pi), 2) /
                     0.1);
    thorax.points.emplace_back(1.3 * r * std::cos(t), r * std::sin(t));
  }
  o.outline = thorax;
  o.n_electrodes = 16;
  const Mesh t = generate_mesh(o);
  check_valid(t);
  double polygon_area = 0;
  for (size_t i = 0; i < thorax.points.size(); ++i) {
    const auto& p = thorax.points[i];
    const auto& q = thorax.points[(i + 1) % thorax.points.size()];
    polygon_area += 0.5 * (p.x() * q.y() - p.y() * q.x());
  }
  CHECK(total_area(t) == doctest::Approx(polygon_area).epsilon(1e-9));
}

TEST_CASE("electrode patches cover the boundary nodes within the electrode width") {
  if (skip_without_gmsh()) return;
  MeshOptions o;
  o.electrode_width = 0.2;
  const Mesh m = generate_mesh(o);
  check_valid(m);
  REQUIRE(m.electrode_patches.size() == 16);
  for (int k = 0; k < 16; ++k) {
    const auto& patch = m.electrode_patches[k];
    REQUIRE(patch.size() >= 3);
    CHECK(std::find(patch.begin(), patch.end(), k) != patch.end());
    // The ends are the electrode's edges: arc distance 0.1 from its centre on the unit circle.
    for (int end : {patch.front(), patch.back()}) {
      const Eigen::Vector2d p = m.nodes.row(end), c = m.nodes.row(k);
      CHECK(std::acos(std::clamp(p.dot(c), -1.0, 1.0)) == doctest::Approx(0.1).epsilon(1e-9));
    }
  }
  o.electrode_width = 0.5;  // > spacing 2π/16 ≈ 0.39
  CHECK_THROWS_WITH_AS(generate_mesh(o), doctest::Contains("electrode width 0.5"),
                       std::invalid_argument);
}

TEST_CASE(
    "forward voltages on the Gmsh circle match pyEIT's v0 on its own mesh to discretisation "
    "error") {
  if (skip_without_gmsh()) return;
  const auto v0_file = eit::test::shared_data_file("pyeit/h0_0.1/v0.csv");
  if (!v0_file) return;
  const Eigen::VectorXd v0 = eit::test::read_csv_vector(*v0_file);
  MeshOptions o;
  o.h0 = 0.05;  // finer than pyEIT's 0.1: the difference is then mostly pyEIT's own error
  ForwardModel fwd(generate_mesh(o), make_protocol({}));
  const Eigen::VectorXd v = fwd.solve();
  REQUIRE(v.size() == v0.size());
  double diff2 = 0, ref2 = 0;  // plain loops: GCC 12 warns inside Eigen's AVX-512 norm()
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    diff2 += (v[i] - v0[i]) * (v[i] - v0[i]);
    ref2 += v0[i] * v0[i];
  }
  const double err = std::sqrt(diff2 / ref2);
  MESSAGE("relative difference to pyEIT v0: ", err);
  CHECK(err < 0.05);
}

TEST_CASE("layered circle fallback mesh is valid with electrodes at pyEIT's positions") {
  const Mesh m = layered_circle_mesh(16, 8);
  CHECK_NOTHROW(check_mesh(m));
  CHECK(m.n_elems() == 16 * 64);
  CHECK(m.n_nodes() == 1 + 16 * 36);
  CHECK(total_area(m) == doctest::Approx(std::numbers::pi).epsilon(0.03));
  const auto expected = electrode_positions(CircleOutline{}, 16);
  for (int k = 0; k < 16; ++k) {
    CHECK(m.nodes(m.electrode_nodes[k], 0) == doctest::Approx(expected[k].x()));
    CHECK(m.nodes(m.electrode_nodes[k], 1) == doctest::Approx(expected[k].y()));
  }
}
