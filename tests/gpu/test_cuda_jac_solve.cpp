// JAC's n_meas-sized solve on the GPU (cuda_jac_solve.hpp) against recon's Eigen version: the same
// H to ≤ 1e-9 relative Frobenius error on real Jacobians (2-D default mesh, pyEIT's 3-D ball when
// ../shared/data is there) and on a tall 3-D-sized Jᵀ; the plugin table hands out the same solve;
// a matrix that is not positive definite is an error; the model form (float(−H) row-major, made
// on the device) is the double solve's H converted, bit for bit, and brings back 4 bytes a value;
// staging chunks smaller than Jᵀ (odd sizes, the ring wrapping) change nothing; concurrent
// warm-ups make one context. Skips visibly without a CUDA device.
#include <doctest/doctest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

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
  o.diagonal_solve = [](const Eigen::MatrixXd& j, const Eigen::VectorXd& r_inv, double lambda) {
    return gpu::cuda_jac_diagonal_solve(j, r_inv, lambda);
  };
  const Eigen::MatrixXd gpu = recon::jac_matrix_from_transposed(jt, o, mesh);
  REQUIRE(gpu.rows() == cpu.rows());
  REQUIRE(gpu.cols() == cpu.cols());
  return rel_fro(gpu, cpu);
}

// A random Jᵀ (n_e × m) whose columns span two decades, and a varying R⁻¹.
Eigen::MatrixXd random_jt(Eigen::Index n_e, Eigen::Index m, std::mt19937_64& rng) {
  std::normal_distribution<double> g(0.0, 1.0);
  Eigen::MatrixXd jt(n_e, m);
  for (Eigen::Index k = 0; k < m; ++k)
    for (Eigen::Index e = 0; e < n_e; ++e)
      jt(e, k) = g(rng) * std::pow(10.0, -2.0 * k / m) * (1.0 + 9.0 * (e % 97) / 96.0);
  return jt;
}

Eigen::VectorXd varying_r_inv(Eigen::Index n_e) {
  Eigen::VectorXd r_inv(n_e);
  for (Eigen::Index e = 0; e < n_e; ++e) r_inv(e) = 1.0 / (0.5 + (e % 13));
  return r_inv;
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

TEST_CASE("cuda JAC solve in the model's form is float(-H) of the double solve, 4 bytes a value") {
  if (gpu::test::skip_without_cuda("cuda jac solve, model form")) return;
  const uint64_t seed = gpu::test::fresh_seed();
  INFO("seed ", seed);
  std::mt19937_64 rng(seed);
  const Eigen::Index n_e = 5001, m = 203;  // odd sizes: partial conversion tiles
  const Eigen::MatrixXd jt = random_jt(n_e, m, rng);
  const Eigen::VectorXd r_inv = varying_r_inv(n_e);
  gpu::JacSolveTimes td, tm;
  const Eigen::MatrixXd h = gpu::cuda_jac_diagonal_solve(jt, r_inv, 1e-3, {}, &td);
  const recon::MatrixRowMajorF hm = gpu::cuda_jac_diagonal_solve_model(jt, r_inv, 1e-3, {}, &tm);
  REQUIRE(hm.rows() == n_e);
  REQUIRE(hm.cols() == m);
  const recon::MatrixRowMajorF expected = (-h).cast<float>();  // what make_model does
  Eigen::Index differ = 0;
  for (Eigen::Index e = 0; e < n_e; ++e)
    for (Eigen::Index k = 0; k < m; ++k) differ += hm(e, k) != expected(e, k);
  CHECK(differ == 0);
  CHECK(rel_fro(-hm.cast<double>(), recon::jac_diagonal_solve_cpu(jt, r_inv, 1e-3)) <= 1e-6);
  const size_t values = static_cast<size_t>(n_e * m);
  CHECK(td.download_bytes == 8 * values);
  CHECK(tm.download_bytes == 4 * values);
  CHECK(tm.upload_bytes == 8 * (values + static_cast<size_t>(n_e)));
  MESSAGE("model form, 5001 × 203: upload ", tm.upload_ms, " ms, products ", tm.products_ms,
          ", solve ", tm.solve_ms, ", convert ", tm.convert_ms, ", download ", tm.download_ms);
  // Through the plugin's table, as `model build` calls it.
  const gpu::PluginApi* api = eit_gpu_plugin_api_v1();
  const bool has_model_solve = api->jac_diagonal_solve_model != nullptr && api->jac_warm_up;
  REQUIRE(has_model_solve);
  CHECK(api->jac_diagonal_solve_model(jt, r_inv, 1e-3, nullptr) == hm);
}

TEST_CASE("cuda JAC solve with staging chunks smaller than J (odd sizes, the ring wrapping)") {
  if (gpu::test::skip_without_cuda("cuda jac solve, small chunks")) return;
  const uint64_t seed = gpu::test::fresh_seed();
  INFO("seed ", seed);
  std::mt19937_64 rng(seed);
  struct Case {
    Eigen::Index n_e, m;
    size_t chunk;
  };
  // 301 × 37 doubles = 89,096 bytes: 22 chunks of 4,099 (the last 3,018), 5 turns of the 4-slot
  // ring; 3001 × 97 doubles in 1,000,003-byte chunks (3 chunks, the last partial); a chunk
  // larger than a slot is cut to the slot.
  for (const Case c : {Case{301, 37, 4099}, Case{3001, 97, 1000003},
                       Case{3001, 97, 3 * gpu::kJacStagingSlotBytes}}) {
    INFO(c.n_e, " × ", c.m, ", chunk ", c.chunk);
    const Eigen::MatrixXd jt = random_jt(c.n_e, c.m, rng);
    const Eigen::VectorXd r_inv = varying_r_inv(c.n_e);
    const Eigen::MatrixXd whole = gpu::cuda_jac_diagonal_solve(jt, r_inv, 1e-2);
    gpu::JacSolveSettings s;
    s.chunk_bytes = c.chunk;
    const Eigen::MatrixXd chunked = gpu::cuda_jac_diagonal_solve(jt, r_inv, 1e-2, s);
    CHECK(chunked == whole);  // the same arithmetic on the same data: bit for bit
    CHECK(rel_fro(chunked, recon::jac_diagonal_solve_cpu(jt, r_inv, 1e-2)) <= 1e-9);
    CHECK(gpu::cuda_jac_diagonal_solve_model(jt, r_inv, 1e-2, s) ==
          gpu::cuda_jac_diagonal_solve_model(jt, r_inv, 1e-2));
  }
}

TEST_CASE("cuda JAC warm-up from several threads at once, then solves") {
  if (gpu::test::skip_without_cuda("cuda jac warm-up")) return;
  std::vector<double> ms(4, -1.0);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ms.size(); ++i)
    threads.emplace_back([&ms, i] { ms[i] = gpu::cuda_jac_warm_up(); });
  for (auto& t : threads) t.join();
  for (double v : ms) CHECK(v >= 0.0);
  const Eigen::MatrixXd jt = Eigen::MatrixXd::Random(400, 30);
  const Eigen::VectorXd r_inv = Eigen::VectorXd::Constant(400, 0.5);
  gpu::JacSolveTimes t;
  const Eigen::MatrixXd h = gpu::cuda_jac_diagonal_solve(jt, r_inv, 1e-2, {}, &t);
  CHECK(rel_fro(h, recon::jac_diagonal_solve_cpu(jt, r_inv, 1e-2)) <= 1e-9);
  // Solves from two threads at once take turns on the one stream and ring.
  Eigen::MatrixXd h1, h2;
  std::thread a([&] { h1 = gpu::cuda_jac_diagonal_solve(jt, r_inv, 1e-2); });
  std::thread b([&] { h2 = gpu::cuda_jac_diagonal_solve(jt, r_inv, 1e-2); });
  a.join();
  b.join();
  CHECK(h1 == h);
  CHECK(h2 == h);
}
