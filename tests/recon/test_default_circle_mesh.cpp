#include <doctest/doctest.h>

#include <algorithm>

#include "eit/recon/default_circle_mesh.hpp"
#include "eit/recon/mesh_boundary.hpp"
#include "eit/recon/mesh_check.hpp"
#include "eit/recon/mesh_generator.hpp"
#include "test_data.hpp"

using namespace eit::recon;

TEST_CASE("the stored default mesh is a valid mesh with 16 electrodes on the boundary") {
  const Mesh m = default_circle_mesh();
  CHECK_NOTHROW(check_mesh(m, "default circle mesh"));
  CHECK(m.n_electrodes() == 16);
  CHECK(m.ref_node == pyeit_ref_node(m.electrode_nodes));
  const auto loop = outer_boundary_loop(m);
  for (int node : m.electrode_nodes) CHECK(std::find(loop.begin(), loop.end(), node) != loop.end());
}

TEST_CASE("only the default options select the stored mesh") {
  CHECK(is_default_circle_mesh(MeshOptions{}));
  MeshOptions o;
  o.h0 = 0.05;
  CHECK_FALSE(is_default_circle_mesh(o));
  o = {};
  o.outline = CircleOutline{2.0};
  CHECK_FALSE(is_default_circle_mesh(o));
  o = {};
  o.n_electrodes = 32;
  CHECK_FALSE(is_default_circle_mesh(o));
  o = {};
  o.electrode_width = 0.1;
  CHECK_FALSE(is_default_circle_mesh(o));
  o = {};
  o.outline = EllipseOutline{1.0, 1.0};
  CHECK_FALSE(is_default_circle_mesh(o));
  o = {};
  o.save_msh = "x.msh";
  CHECK_FALSE(is_default_circle_mesh(o));
}

TEST_CASE("the stored default mesh is exactly what the Gmsh generator makes for those options") {
  if (!mesh_generator_available()) {
    eit::test::report_skip("stored default mesh against Gmsh", "built without Gmsh");
    return;
  }
  const Mesh stored = default_circle_mesh();
  const Mesh generated = generate_mesh(MeshOptions{});
  // On a mismatch (a different Gmsh version): rerun scripts/embed_default_mesh.py.
  REQUIRE(stored.n_nodes() == generated.n_nodes());
  REQUIRE(stored.n_elems() == generated.n_elems());
  CHECK((stored.nodes - generated.nodes).cwiseAbs().maxCoeff() == 0.0);
  CHECK((stored.elements.array() == generated.elements.array()).all());
  CHECK(stored.electrode_nodes == generated.electrode_nodes);
  CHECK(stored.ref_node == generated.ref_node);
}
