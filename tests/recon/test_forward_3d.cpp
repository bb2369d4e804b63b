// 3-D forward model physics on Gmsh cylinders (generate_mesh_3d) and the 3-D mesh checks:
// reciprocity, Jacobian against finite differences, CHOLMOD against Eigen, deterministic meshes,
// checks that name the element.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/mesh_check.hpp"
#include "eit/recon/mesh_check_3d.hpp"
#include "eit/recon/mesh_generator.hpp"
#include "eit/recon/mesh_generator_3d.hpp"
#include "eit/recon/mesh_surface.hpp"
#include "pyeit_csv.hpp"
#include "test_data.hpp"

using namespace eit::recon;
using eit::test::rel_fro_error;

namespace {

// A coarse two-ring cylinder with 16 electrodes (a few thousand tetrahedra, fast).
Mesh small_cylinder() {
  Mesh3dOptions o;
  o.n_electrodes = 16;
  o.n_rings = 2;
  o.h0 = 0.3;
  return generate_mesh_3d(o);
}

// One regular-ish tetrahedron pair sharing a face, for the check messages.
Mesh two_tets() {
  Mesh m;
  m.nodes.resize(5, 3);
  m.nodes << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1;
  m.elements.resize(2, 4);
  m.elements << 0, 1, 2, 3, 1, 2, 3, 4;
  if (tet_six_volume(m, 1) < 0) std::swap(m.elements(1, 2), m.elements(1, 3));
  m.electrode_nodes = {1, 2};
  m.ref_node = 0;
  return m;
}

}  // namespace

TEST_CASE("3-D mesh checks name the element: inverted, degenerate, electrode off the surface") {
  Mesh m = two_tets();
  CHECK_NOTHROW(check_mesh(m));
  CHECK(surface_faces(m).size() == 6);
  Mesh inverted = m;
  std::swap(inverted.elements(1, 0), inverted.elements(1, 1));
  CHECK_THROWS_WITH_AS(check_mesh(inverted), doctest::Contains("inverted"), std::invalid_argument);
  Mesh flat = m;
  // Node 4 in the plane of nodes 1, 2, 3: element 1 is flat.
  flat.nodes.row(4) = 0.25 * flat.nodes.row(1) + 0.25 * flat.nodes.row(2) + 0.5 * flat.nodes.row(3);
  CHECK_THROWS_WITH_AS(check_mesh(flat), doctest::Contains("element 1"), std::invalid_argument);
  CHECK(find_slivers(m, 0.01).count == 0);
}

TEST_CASE("3-D cylinder mesh: electrodes on the rings, deterministic, no slivers") {
  if (!mesh_generator_available()) {
    eit::test::report_skip("3-D cylinder mesh", "built without Gmsh");
    return;
  }
  const Mesh a = small_cylinder();
  const Mesh b = small_cylinder();
  MESSAGE(a.n_nodes() << " nodes, " << a.n_elems() << " tetrahedra");
  CHECK(a.dim() == 3);
  CHECK(a.n_electrodes() == 16);
  CHECK(a.ref_node == 16);
  CHECK(a.nodes == b.nodes);
  CHECK(a.elements == b.elements);
  for (int e = 0; e < 16; ++e) {
    CHECK(a.nodes.row(e).head(2).norm() == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(a.nodes(e, 2) == doctest::Approx(e < 8 ? 1.0 / 3 : 2.0 / 3).epsilon(1e-12));
  }
  CHECK(a.nodes(0, 0) == doctest::Approx(-1.0));  // electrode 0 at 9 o'clock
  CHECK(find_slivers(a, 0.01).count == 0);
  Mesh3dOptions bad;
  bad.n_electrodes = 16;
  bad.n_rings = 3;
  CHECK_THROWS_AS(generate_mesh_3d(bad), std::invalid_argument);
}

TEST_CASE("3-D forward model: reciprocity, v from Z, CHOLMOD = Eigen, J = finite diff") {
  if (!mesh_generator_available()) {
    eit::test::report_skip("3-D forward model", "built without Gmsh");
    return;
  }
  const Mesh mesh = small_cylinder();
  ProtocolOptions po;
  po.n_electrodes = 16;
  const Protocol protocol = make_protocol(po);
  ForwardOptions eigen_options;
  eigen_options.solver = ForwardOptions::Solver::kEigen;
  ForwardModel fwd(mesh, protocol, eigen_options);

  const Eigen::MatrixXd z = fwd.transfer_impedance();
  CHECK(rel_fro_error(z, z.transpose()) < 1e-12);  // reciprocity
  // Every measurement is the difference of transfer impedances (unit current in, unit out).
  const Eigen::VectorXd v = fwd.solve();
  for (size_t k = 0; k < protocol.n_meas(); ++k) {
    const Measurement& m = protocol.measurements[k];
    const Drive& d = protocol.drives[static_cast<size_t>(m.drive)];
    const double expect =
        z(m.positive, d.source) - z(m.positive, d.sink) - z(m.negative, d.source) +
        z(m.negative, d.sink);
    CHECK(v(static_cast<Eigen::Index>(k)) == doctest::Approx(expect).epsilon(1e-12));
  }
  const Eigen::MatrixXd f = fwd.drive_potentials();
  CHECK(f.row(mesh.ref_node).norm() == 0.0);

#ifdef EIT_BUILT_CHOLMOD_MODULE
  REQUIRE_MESSAGE(cholmod_available(), "libeit_cholmod.so was built but does not load");
#endif
  if (cholmod_available()) {
    ForwardOptions co;
    co.solver = ForwardOptions::Solver::kCholmod;
    ForwardModel chol(mesh, protocol, co);
    const double e_v = rel_fro_error(chol.solve(), v);
    const double e_j = rel_fro_error(chol.jacobian(), fwd.jacobian());
    MESSAGE("CHOLMOD vs Eigen: v " << e_v << ", J " << e_j);
    CHECK(e_v < 1e-10);
    CHECK(e_j < 1e-10);
  } else {
    eit::test::report_skip("CHOLMOD vs Eigen", "built without CHOLMOD");
  }

  // J = −∂v/∂σ_e by central differences at a heterogeneous σ, on a few elements.
  Eigen::VectorXd sigma = Eigen::VectorXd::Ones(mesh.n_elems());
  for (int e = 0; e < mesh.n_elems(); e += 7) sigma(e) = 1.5;
  const Eigen::MatrixXd J = fwd.jacobian(sigma);
  for (int e : {0, mesh.n_elems() / 3, mesh.n_elems() - 1}) {
    const double h = 1e-3;
    Eigen::VectorXd up = sigma, down = sigma;
    up(e) += h;
    down(e) -= h;
    const Eigen::VectorXd fd = -(fwd.solve(up) - fwd.solve(down)) / (2 * h);
    const double err = rel_fro_error(J.col(e), fd);
    MESSAGE("element " << e << ": J vs finite differences " << err);
    CHECK(err < 1e-4);
  }
}
