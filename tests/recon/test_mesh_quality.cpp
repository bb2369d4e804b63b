// Mesh quality after generation: a mesher that gives up must not yield a model silently. The
// Gmsh case (h0 = 0.001 on the unit disc: 8,400 triangles, 122 interior nodes, an edge as long as
// the diameter, 0.06° angles; the old `model build` wrote it without a word) is reproduced here,
// plus hand-made meshes for each check, 2-D and 3-D.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "eit/recon/mesh_generator.hpp"
#include "eit/recon/mesh_generator_3d.hpp"
#include "eit/recon/mesh_quality.hpp"
#include "test_data.hpp"

using namespace eit::recon;

namespace {

// A regular n-gon of radius 1 triangulated as a fan from node 0: no interior node, long edges
// across the disc and thin triangles (what a failed mesher looks like).
Mesh fan(int n) {
  Mesh m;
  m.nodes.resize(n, 2);
  for (int i = 0; i < n; ++i) {
    const double t = 2 * std::numbers::pi * i / n;
    m.nodes(i, 0) = std::cos(t);
    m.nodes(i, 1) = std::sin(t);
  }
  m.elements.resize(n - 2, 3);
  for (int i = 0; i < n - 2; ++i) m.elements.row(i) << 0, i + 1, i + 2;
  return m;
}

// The unit cube cut into 5 tetrahedra: no interior node.
Mesh cube5() {
  Mesh m;
  m.nodes.resize(8, 3);
  for (int i = 0; i < 8; ++i) m.nodes.row(i) << (i & 1), (i >> 1) & 1, (i >> 2) & 1;
  m.elements.resize(5, 4);
  m.elements << 0, 1, 2, 4, 1, 3, 2, 7, 1, 4, 5, 7, 2, 6, 4, 7, 1, 2, 4, 7;
  return m;
}

std::string failure(const Mesh& m, double h0) {
  try {
    require_mesh_quality(m, h0, "test mesh");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return {};
}

bool skip_without_gmsh() {
  if (mesh_generator_available()) return false;
  eit::test::report_skip("mesh quality of generated meshes", "built without Gmsh");
  return true;
}

}  // namespace

TEST_CASE("a fan of thin triangles with no interior node fails every 2-D check, with numbers") {
  const Mesh m = fan(200);
  const MeshQuality q = measure_mesh_quality(m, 0.1);
  CHECK(q.interior_nodes == 0);
  CHECK(q.elements == 198);
  CHECK(q.measure == doctest::Approx(100 * std::sin(2 * std::numbers::pi / 200)));
  CHECK(q.longest_edge == doctest::Approx(2.0));
  CHECK(q.smallest_angle_deg == doctest::Approx(0.9));
  const std::string why = failure(m, 0.1);
  CAPTURE(why);
  CHECK(why.find("test mesh at h0 0.1 is not usable") != std::string::npos);
  CHECK(why.find("no interior node") != std::string::npos);
  CHECK(why.find("198 triangles where about 725 are expected") != std::string::npos);
  CHECK(why.find("longest edge 2 = 20 × h0") != std::string::npos);
  CHECK(why.find("smallest angle") != std::string::npos);
  CHECK(why.find("use a larger h0") != std::string::npos);
  // At an h0 as coarse as the fan itself the count passes; its angles still do not.
  CHECK(failure(m, 2.0).find("smallest angle") != std::string::npos);
}

TEST_CASE("a coarse tetrahedral cube with no interior node fails the 3-D checks") {
  const Mesh m = cube5();
  const MeshQuality q = measure_mesh_quality(m, 0.1);
  CHECK(q.interior_nodes == 0);
  CHECK(q.measure == doctest::Approx(1.0));
  const std::string why = failure(m, 0.1);
  CHECK(why.find("no interior node") != std::string::npos);
  CHECK(why.find("5 tetrahedra where about 8485 are expected for volume 1") != std::string::npos);
}

TEST_CASE("generated meshes pass with margin (circle, ellipse, fine, coarse, 3-D)") {
  if (skip_without_gmsh()) return;
  for (double h0 : {0.05, 0.1, 0.3, 0.6}) {
    MeshOptions o;
    o.h0 = h0;
    const Mesh m = generate_mesh(o);  // checks quality itself; measure again for the margins
    const MeshQuality q = measure_mesh_quality(m, h0);
    CAPTURE(h0);
    CHECK(q.interior_nodes > 0);
    CHECK(q.elements >= q.expected_elements);
    CHECK(q.longest_edge <= 1.5 * h0);
    CHECK(q.smallest_angle_deg >= 20);
  }
  MeshOptions e;
  e.outline = EllipseOutline{1.5, 1.0};
  e.h0 = 0.08;
  CHECK_NOTHROW(generate_mesh(e));
  Mesh3dOptions c;
  c.n_rings = 2;
  c.h0 = 0.3;
  const Mesh m3 = generate_mesh_3d(c);
  const MeshQuality q3 = measure_mesh_quality(m3, c.h0);
  MESSAGE(q3.elements << " tetrahedra, " << q3.expected_elements << " expected, longest edge "
                      << q3.longest_edge / c.h0 << " h0");
  CHECK(q3.interior_nodes > 0);
  CHECK(q3.elements >= kMinCountRatio3d * q3.expected_elements);
  CHECK(q3.longest_edge <= kMaxEdgeOverH0 * c.h0);
}

TEST_CASE("generate_mesh at h0 0.001 (Gmsh gives up) is an error, not a mesh") {
  if (skip_without_gmsh()) return;
  MeshOptions o;
  o.h0 = 0.001;
  std::string why;
  try {
    const Mesh m = generate_mesh(o);
    MESSAGE("generated " << m.n_elems() << " triangles");
  } catch (const std::runtime_error& e) {
    why = e.what();
  }
  CAPTURE(why);
  CHECK(why.find("generated mesh at h0 0.001 is not usable") != std::string::npos);
  CHECK(why.find("use a larger h0") != std::string::npos);
}
