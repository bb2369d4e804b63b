// CudaGaussNewton against the CPU solver (both float64): every mode, both normal-equation sizes,
// pyEIT's static example, and divergence. Skips visibly without a CUDA device.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "eit/gpu/cuda_gauss_newton.hpp"
#include "eit/recon/layered_circle_mesh.hpp"
#include "eit/recon/mesh_io.hpp"
#include "gpu_test_support.hpp"
#include "test_data.hpp"

using namespace eit;
using eit::gpu::test::skip_without_cuda_gn;

namespace {

Eigen::VectorXd phantom(const recon::Mesh& mesh) {
  Eigen::VectorXd s = Eigen::VectorXd::Constant(mesh.n_elems(), 2.0);
  for (int e = 0; e < mesh.n_elems(); ++e) {
    Eigen::RowVector2d c = Eigen::RowVector2d::Zero();
    for (int k = 0; k < 3; ++k) c += mesh.nodes.row(mesh.elements(e, k)) / 3.0;
    if ((c - Eigen::RowVector2d(0.4, 0.3)).norm() < 0.3) s(e) = 5.0;
  }
  return s;
}

double rel(const Eigen::VectorXd& a, const Eigen::VectorXd& b) { return (a - b).norm() / b.norm(); }

}  // namespace

TEST_CASE("cuda gn matches the CPU solver to 1e-5 in every mode and both system sizes") {
  if (skip_without_cuda_gn("cuda gn vs cpu")) return;
  using P = recon::GnOptions::Prior;
  for (int rings : {2, 6})
    for (P prior : {P::kKotre, P::kLm, P::kTikhonov})
      for (bool compat : {false, true}) {
        CAPTURE(rings);
        CAPTURE(static_cast<int>(prior));
        CAPTURE(compat);
        const recon::Mesh mesh = recon::layered_circle_mesh(16, rings);
        const recon::Protocol protocol = recon::make_protocol({});
        recon::ForwardModel fwd(mesh, protocol);
        const Eigen::VectorXd v = fwd.solve(phantom(mesh));
        recon::GnOptions o;
        o.prior = prior;
        o.lambda0 = 0.5;
        o.lambda_decay = 0.5;
        o.lambda_min = 1e-3;
        o.max_iterations = 8;
        o.tolerance = 1e-7;
        o.start = recon::GnOptions::Start::kFitted;
        o.pyeit_compat = compat;
        recon::GaussNewton cpu(mesh, protocol, {}, o);
        gpu::CudaGaussNewton gpu(mesh, protocol, o);
        const recon::GnResult a = cpu.solve(v), b = gpu.solve(v);
        CHECK(a.iterations == b.iterations);
        CHECK(a.status == b.status);
        CHECK(rel(b.sigma, a.sigma) < 1e-5);
        // warm start, as streaming uses it
        const recon::GnResult c = cpu.solve(v, a.sigma, 3), d = gpu.solve(v, a.sigma, 3);
        CHECK(rel(d.sigma, c.sigma) < 1e-5);
      }
}

TEST_CASE("cuda gn reproduces pyEIT's static example (static_gn_16) like the CPU solver") {
  if (skip_without_cuda_gn("cuda gn static_gn_16")) return;
  const auto nodes = eit::test::shared_data_file("pyeit/static_gn_16/nodes.csv");
  if (!nodes) return;
  const recon::Mesh mesh = recon::load_mesh_csv_folder(nodes->parent_path());
  const recon::Protocol protocol = recon::make_protocol({});
  std::ifstream in(nodes->parent_path() / "v1.csv");
  std::vector<double> values;
  for (double x; in >> x;) values.push_back(x);
  const Eigen::VectorXd v1 = Eigen::Map<const Eigen::VectorXd>(values.data(), values.size());
  recon::GnOptions o;
  o.pyeit_compat = true;
  recon::GaussNewton cpu(mesh, protocol, {}, o);
  gpu::CudaGaussNewton gpu(mesh, protocol, o);
  const recon::GnResult a = cpu.solve(v1), b = gpu.solve(v1);
  CHECK(b.iterations == 20);
  MESSAGE("cuda vs cpu after 20 iterations: ", rel(b.sigma, a.sigma));
  CHECK(rel(b.sigma, a.sigma) < 1e-5);
}

TEST_CASE("cuda gn reports divergence and keeps the last good iterate") {
  if (skip_without_cuda_gn("cuda gn divergence")) return;
  const recon::Mesh mesh = recon::layered_circle_mesh(16, 3);
  const recon::Protocol protocol = recon::make_protocol({});
  recon::ForwardModel fwd(mesh, protocol);
  recon::GnOptions o;
  o.lambda0 = 1e-6;
  gpu::CudaGaussNewton gpu(mesh, protocol, o);
  const recon::GnResult r = gpu.solve(-fwd.solve());
  CHECK(r.status == recon::GnStatus::kDiverged);
  CHECK(r.sigma.minCoeff() > 0);
}
