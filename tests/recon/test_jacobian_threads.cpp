// The adjoint Jacobian split over threads (ForwardOptions::threads): every thread count gives the
// one-thread Jᵀ to the bit, for tetrahedra and triangles, plain and normalised. Meshes are built
// here (a Kuhn-subdivided cube, a structured disc), so the test needs neither Gmsh nor data.
#include <doctest/doctest.h>

#include <cmath>

#include "cube_mesh.hpp"
#include "eit/recon/forward_model.hpp"
#include "eit/recon/layered_circle_mesh.hpp"

using namespace eit::recon;
using eit::test::cube_mesh;

namespace {

// Jᵀ of `mesh` (adjacent protocol) at a heterogeneous σ with `threads` threads.
Eigen::MatrixXd jt_with(const Mesh& mesh, int threads, bool normalize) {
  ProtocolOptions po;
  po.n_electrodes = mesh.n_electrodes();
  ForwardOptions fo;
  fo.threads = threads;
  ForwardModel fwd(mesh, make_protocol(po), fo);
  Eigen::VectorXd sigma = Eigen::VectorXd::Ones(mesh.n_elems());
  for (Eigen::Index e = 0; e < sigma.size(); e += 5) sigma(e) = 1.0 + 0.1 * std::sin(double(e));
  return fwd.jacobian_transposed(sigma, normalize);
}

bool bit_equal(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all();
}

}  // namespace

TEST_CASE("Jacobian on 1, 2, 3 and 16 threads: Jᵀ equal to the bit (tetrahedra, triangles)") {
  const Mesh cube = cube_mesh(12);  // 10,368 tetrahedra: 6 tiles of 2,048 elements (the last short)
  REQUIRE(cube.n_elems() == 10368);
  const Mesh disc = layered_circle_mesh(16, 20);  // 6,400 triangles: 4 tiles
  REQUIRE(disc.n_elems() == 6400);
  for (bool normalize : {false, true}) {
    CAPTURE(normalize);
    const Eigen::MatrixXd one = jt_with(cube, 1, normalize);
    REQUIRE(one.rows() == cube.n_elems());
    CHECK(one.allFinite());
    CHECK(one.bottomRows(1).norm() > 0);  // the last (short) tile was computed
    for (int threads : {2, 3, 16}) {      // 16 > tiles: clamped to one tile per thread
      CAPTURE(threads);
      CHECK(bit_equal(jt_with(cube, threads, normalize), one));
    }
    const Eigen::MatrixXd disc_one = jt_with(disc, 1, normalize);
    CHECK(bit_equal(jt_with(disc, 3, normalize), disc_one));
    CHECK(bit_equal(jt_with(disc, 0, normalize), disc_one));  // 0: every core
  }
}
