// JAC's n_meas-sized solve on the GPU (cuda_jac_solve.hpp) against recon's Eigen version: the same
// H to ≤ 1e-9 relative Frobenius error on real Jacobians (2-D default mesh, pyEIT's 3-D ball when
// ../shared/data is there) and on a tall 3-D-sized Jᵀ; the plugin table hands out the same solve;
// a matrix that is not positive definite is an error. Skips visibly without a CUDA device.
#include <doctest/doctest.h>

#include <random>
#include <stdexcept>
#include <string>

#include "eit/gpu/cuda_jac_solve.hpp"
#include "eit/gpu/plugin_api.hpp"
#include "eit/recon/default_circle_mesh.hpp"
#include "eit/recon/forward_model.hpp"
#include "eit/recon/jac.hpp"
#include "eit/recon/mesh_io.hpp"
#include "gpu_test_support.hpp"
#include "test_data.hpp"

extern "C" const eit::gpu::PluginApi* eit_gpu_plugin_api_v1();

using namespace eit;

namespace {

double rel_fro(const Eigen::MatrixXd& a, const Eigen::MatrixXd& ref) {
  return (a - ref).norm() / ref.norm();
}

// H on the CPU and on the GPU through JacOptions::diagonal_solve, for one prior.
double gpu_vs_cpu(const Eigen::MatrixXd& jt, const recon::Mesh& mesh,
                  recon::JacOptions::Prior prior) {
  recon::JacOptions o;
  o.prior = prior;
  o.p = 0.5;
  const Eigen::MatrixXd cpu = recon::jac_matrix_from_transposed(jt, o, mesh);
  o.diagonal_solve = gpu::cuda_jac_diagonal_solve;
  const Eigen::MatrixXd gpu = recon::jac_matrix_from_transposed(jt, o, mesh);
  REQUIRE(gpu.rows() == cpu.rows());
  REQUIRE(gpu.cols() == cpu.cols());
  return rel_fro(gpu, cpu);
}

}  // namespace

TEST_CASE("cuda JAC solve gives the CPU's H to 1e-9 on the default 2-D mesh's Jacobian") {
  if (gpu::test::skip_without_cuda("cuda jac solve, default mesh")) return;
  const recon::Mesh mesh = recon::default_circle_mesh();
  recon::ForwardModel forward(mesh, recon::make_protocol({}));
  const Eigen::MatrixXd jt = forward.jacobian_transposed({}, true);
  for (auto prior : {recon::JacOptions::Prior::kKotre, recon::JacOptions::Prior::kTikhonov,
                     recon::JacOptions::Prior::kNoser}) {
    const double err = gpu_vs_cpu(jt, mesh, prior);
    MESSAGE("default mesh, prior ", recon::to_string(prior), ": relative error ", err);
    CHECK(err <= 1e-9);
  }
}

TEST_CASE("cuda JAC solve gives the CPU's H to 1e-9 on pyEIT's 3-D ball") {
  if (gpu::test::skip_without_cuda("cuda jac solve, 3-D ball")) return;
  const auto nodes = eit::test::shared_data_file("pyeit/ball3d_h0_0.2/nodes.csv.gz");
  if (!nodes) return;
  const recon::Mesh mesh = recon::load_mesh_csv_folder(nodes->parent_path());
  recon::ForwardModel forward(mesh, recon::make_protocol({}));
  const Eigen::MatrixXd jt = forward.jacobian_transposed({}, true);
  const double err = gpu_vs_cpu(jt, mesh, recon::JacOptions::Prior::kKotre);
  MESSAGE("3-D ball (", jt.rows(), " tetrahedra × ", jt.cols(), "): relative error ", err);
  CHECK(err <= 1e-9);
}

TEST_CASE("cuda JAC solve gives the CPU's H to 1e-9 on a tall 3-D-sized Jacobian") {
  if (gpu::test::skip_without_cuda("cuda jac solve, 20000 x 928")) return;
  const uint64_t seed = gpu::test::fresh_seed();
  INFO("seed ", seed);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  // Columns scaled over two decades, rows over one: J R⁻¹ Jᵀ is far from a multiple of I.
  const Eigen::Index n_e = 20000, m = 928;
  Eigen::MatrixXd jt(n_e, m);
  for (Eigen::Index k = 0; k < m; ++k)
    for (Eigen::Index e = 0; e < n_e; ++e)
      jt(e, k) = g(rng) * std::pow(10.0, -2.0 * k / m) * (1.0 + 9.0 * (e % 97) / 96.0);
  Eigen::VectorXd r_inv(n_e);
  for (Eigen::Index e = 0; e < n_e; ++e) r_inv(e) = 1.0 / (0.5 + (e % 13));
  const Eigen::MatrixXd cpu = recon::jac_diagonal_solve_cpu(jt, r_inv, 1e-3);
  const Eigen::MatrixXd gpu = gpu::cuda_jac_diagonal_solve(jt, r_inv, 1e-3);
  const double err = rel_fro(gpu, cpu);
  MESSAGE("20000 × 928: relative error ", err);
  CHECK(err <= 1e-9);
  // The plugin's table hands `model build` this same solve.
  const gpu::PluginApi* api = eit_gpu_plugin_api_v1();
  const bool has_solve = api->jac_diagonal_solve != nullptr;
  REQUIRE(has_solve);
  const Eigen::MatrixXd small = jt.topRows(3000);
  CHECK(rel_fro(api->jac_diagonal_solve(small, r_inv.head(3000), 1e-2),
                recon::jac_diagonal_solve_cpu(small, r_inv.head(3000), 1e-2)) <= 1e-9);
}

TEST_CASE("cuda JAC solve reports a matrix that is not positive definite, and bad sizes") {
  if (gpu::test::skip_without_cuda("cuda jac solve errors")) return;
  const Eigen::MatrixXd jt = Eigen::MatrixXd::Ones(50, 8);
  const Eigen::VectorXd r_inv = Eigen::VectorXd::Ones(50);
  // λ < 0 makes J R⁻¹ Jᵀ + λI indefinite (J R⁻¹ Jᵀ has rank 1 here).
  CHECK_THROWS_WITH_AS(gpu::cuda_jac_diagonal_solve(jt, r_inv, -1.0),
                       doctest::Contains("not positive definite"), std::runtime_error);
  CHECK_THROWS_WITH_AS(gpu::cuda_jac_diagonal_solve(jt, Eigen::VectorXd::Ones(49), 1e-3),
                       doctest::Contains("49 values"), std::invalid_argument);
}
