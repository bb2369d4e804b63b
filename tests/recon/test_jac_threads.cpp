// JAC's n_meas-sized solve over threads (JacOptions::threads, jac_diagonal_solve_cpu): fixed
// tiles, so H, the model's float H and the model id are the same to the bit on 1, 2, 3 and 16
// threads; and the tiled H still solves H·(JR⁻¹Jᵀ + λI) = R⁻¹Jᵀ. Meshes are built here (a
// Kuhn-subdivided cube, a structured disc): no Gmsh, no data.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "../../recon/src/tile_runner.hpp"
#include "cube_mesh.hpp"
#include "eit/recon/jac.hpp"
#include "eit/recon/layered_circle_mesh.hpp"
#include "eit/recon/model_file.hpp"

using namespace eit::recon;

namespace {

bool bit_equal(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all();
}

// A dense Jᵀ with no structure the tiles could hide behind, and a positive R⁻¹ spread over
// three decades (as kotre's is).
Eigen::MatrixXd synthetic_jt(Eigen::Index n_e, Eigen::Index n_meas) {
  Eigen::MatrixXd jt(n_e, n_meas);
  for (Eigen::Index c = 0; c < n_meas; ++c)
    for (Eigen::Index e = 0; e < n_e; ++e)
      jt(e, c) = std::sin(0.37 * double(e) + 1.3 * double(c)) + 0.01 * std::cos(double(e * c));
  return jt;
}

}  // namespace

TEST_CASE("jac_diagonal_solve_cpu on 1, 2, 3 and 16 threads: H equal to the bit, and correct") {
  // 5,000 elements: 3 row tiles of H (the last short); 300 measurements: 3 column tiles of the
  // Gram matrix (128, 128, 44).
  const Eigen::MatrixXd jt = synthetic_jt(5000, 300);
  Eigen::VectorXd r_inv(jt.rows());
  for (Eigen::Index e = 0; e < r_inv.size(); ++e) r_inv(e) = std::pow(10.0, -3.0 * e / 5000.0);
  const double lambda = 0.05;
  const Eigen::MatrixXd one = jac_diagonal_solve_cpu(jt, r_inv, lambda, 1);
  REQUIRE(one.rows() == jt.rows());
  REQUIRE(one.cols() == jt.cols());
  // H·M = R⁻¹Jᵀ with M = J R⁻¹ Jᵀ + λI formed directly (a tile of M or H left out fails here).
  const Eigen::MatrixXd rjt = r_inv.asDiagonal() * jt;
  const Eigen::MatrixXd m =
      jt.transpose() * rjt + lambda * Eigen::MatrixXd::Identity(jt.cols(), jt.cols());
  CHECK((one * m - rjt).norm() / rjt.norm() <= 1e-9);
  const MatrixRowMajorF model_one = jac_diagonal_solve_cpu_model(jt, r_inv, lambda, 1);
  CHECK(model_one == MatrixRowMajorF((-one).cast<float>()));  // the same H, converted per tile
  for (int threads : {2, 3, 16, 0}) {                         // 16 > tiles; 0 = every core
    CAPTURE(threads);
    CHECK(bit_equal(jac_diagonal_solve_cpu(jt, r_inv, lambda, threads), one));
    CHECK(jac_diagonal_solve_cpu_model(jt, r_inv, lambda, threads) == model_one);
  }
}

TEST_CASE("build_jac with JacOptions::threads 1, 2, 3 and 16: same H and model id (3-D, 2-D)") {
  const Mesh cube = eit::test::cube_mesh(12);     // 10,368 tetrahedra, 208 measurements
  const Mesh disc = layered_circle_mesh(16, 20);  // 6,400 triangles
  for (const Mesh* mesh : {&cube, &disc}) {
    CAPTURE(mesh->n_elems());
    ProtocolOptions po;
    po.n_electrodes = mesh->n_electrodes();
    ForwardModel fwd(*mesh, make_protocol(po));
    const Eigen::MatrixXd jt = fwd.jacobian_transposed();
    JacOptions o;
    o.p = 0.5;
    o.threads = 1;
    const ReconstructionMatrix one = build_jac(fwd, jt, o);
    const std::string id = model_content_hash(one.model);
    REQUIRE(one.H.rows() == mesh->n_elems());
    CHECK(one.model.H == MatrixRowMajorF((-one.H).cast<float>()));
    for (int threads : {2, 3, 16}) {
      CAPTURE(threads);
      o.threads = threads;
      const ReconstructionMatrix many = build_jac(fwd, jt, o);
      CHECK(bit_equal(many.H, one.H));
      CHECK(many.model.H == one.model.H);
      CHECK(model_content_hash(many.model) == id);
      // The CLI's CPU path: the model's float H straight from the tiles, no double H.
      JacOptions to_model = o;
      to_model.diagonal_solve_to_model = [threads](const Eigen::MatrixXd& j,
                                                   const Eigen::VectorXd& r_inv, double lambda) {
        return jac_diagonal_solve_cpu_model(j, r_inv, lambda, threads);
      };
      CHECK(model_content_hash(build_jac(fwd, jt, to_model).model) == id);
    }
  }
}

TEST_CASE("run_tiles visits every tile once and rethrows a tile's exception on the caller") {
  for (int threads : {1, 2, 16}) {
    CAPTURE(threads);
    std::vector<std::atomic<int>> visits(37);
    eit::recon::detail::run_tiles(37, threads, [&](Eigen::Index t) { ++visits[size_t(t)]; });
    for (const auto& v : visits) CHECK(v.load() == 1);
    CHECK_THROWS_WITH_AS(eit::recon::detail::run_tiles(37, threads,
                                                       [](Eigen::Index t) {
                                                         if (t == 5)
                                                           throw std::runtime_error("tile 5");
                                                       }),
                         "tile 5", std::runtime_error);
  }
}
