// The adjoint Jacobian split over threads (ForwardOptions::threads): every thread count gives the
// one-thread Jᵀ to the bit, for tetrahedra and triangles, plain and normalised. Meshes are built
// here (a Kuhn-subdivided cube, a structured disc), so the test needs neither Gmsh nor data.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <utility>

#include "eit/recon/layered_circle_mesh.hpp"
#include "eit/recon/forward_model.hpp"

using namespace eit::recon;

namespace {

// An n × n × n grid of unit cubes in [-1, 1]³, each cut into the 6 tetrahedra along its main
// diagonal (Kuhn: same orientation in every cube, so neighbouring faces match). 16 point
// electrodes on the side faces of the middle layer z = 0, ground at the centre node.
Mesh cube_mesh(int n) {
  const int m = n + 1;
  const auto node = [m](int i, int j, int k) { return (k * m + j) * m + i; };
  Mesh mesh;
  mesh.nodes.resize(m * m * m, 3);
  for (int k = 0; k < m; ++k)
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < m; ++i)
        mesh.nodes.row(node(i, j, k)) << -1.0 + 2.0 * i / n, -1.0 + 2.0 * j / n, -1.0 + 2.0 * k / n;
  constexpr std::array<std::array<int, 3>, 6> kOrders{
      {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};
  constexpr std::array<bool, 6> kOdd{false, true, true, false, false, true};  // parity of each
  mesh.elements.resize(6 * n * n * n, 4);
  int e = 0;
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        for (const auto& order : kOrders) {
          std::array<int, 3> at{i, j, k};
          mesh.elements(e, 0) = node(at[0], at[1], at[2]);
          for (int s = 0; s < 3; ++s) {
            ++at[static_cast<size_t>(order[static_cast<size_t>(s)])];
            mesh.elements(e, s + 1) = node(at[0], at[1], at[2]);
          }
          // Odd permutations give the mirrored tetrahedron: one orientation for all of them.
          if (kOdd[static_cast<size_t>(e % 6)]) std::swap(mesh.elements(e, 2), mesh.elements(e, 3));
          ++e;
        }
  // The 4n boundary nodes of the middle layer, walked around; 16 of them, evenly spaced.
  std::vector<int> ring;
  const int z = n / 2;
  for (int i = 0; i < n; ++i) ring.push_back(node(i, 0, z));
  for (int j = 0; j < n; ++j) ring.push_back(node(n, j, z));
  for (int i = n; i > 0; --i) ring.push_back(node(i, n, z));
  for (int j = n; j > 0; --j) ring.push_back(node(0, j, z));
  for (int l = 0; l < 16; ++l)
    mesh.electrode_nodes.push_back(ring[static_cast<size_t>(l) * ring.size() / 16]);
  mesh.ref_node = node(n / 2, n / 2, n / 2);
  return mesh;
}

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
    for (int threads : {2, 3, 16}) {  // 16 > tiles: clamped to one tile per thread
      CAPTURE(threads);
      CHECK(bit_equal(jt_with(cube, threads, normalize), one));
    }
    const Eigen::MatrixXd disc_one = jt_with(disc, 1, normalize);
    CHECK(bit_equal(jt_with(disc, 3, normalize), disc_one));
    CHECK(bit_equal(jt_with(disc, 0, normalize), disc_one));  // 0: every core
  }
}
