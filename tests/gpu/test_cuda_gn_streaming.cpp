// The CUDA Gauss–Newton as the pipeline sees it: the plugin's make_cuda_reconstructor() turns a
// "gn" model into a streaming reconstructor ("cuda-gn") whose images follow the host
// GnReconstructor's frame by frame (warm starts, a non-finite frame, a divergence); and the
// iteration replayed as a CUDA graph gives the launched iteration's result. Skips visibly without
// a CUDA device.
#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "eit/gpu/cuda_backend.hpp"
#include "eit/gpu/cuda_gauss_newton.hpp"
#include "eit/pipeline/gn_reconstructor.hpp"
#include "gn_stream_support.hpp"
#include "gpu_test_support.hpp"
#include "test_data.hpp"

using namespace eit;
using eit::gpu::test::skip_without_cuda_gn;
using eit::test::GnFrames;
using eit::test::run_one;

TEST_CASE("cuda backend streams a gn model like the host GnReconstructor") {
  if (skip_without_cuda_gn("cuda gn streaming")) return;
  const auto [mesh, protocol, model, truth, v] =
      eit::test::gn_phantom_case(eit::test::gn_streaming_options(10, 3));
  gpu::CudaOptions co;
  co.max_batch = 4;
  const std::unique_ptr<pipeline::Reconstructor> cuda = gpu::make_cuda_reconstructor(model, co);
  pipeline::GnReconstructor host(model);
  CHECK(cuda->name() == "cuda-gn");
  CHECK(cuda->n_out() == static_cast<size_t>(mesh.n_elems()));
  CHECK(cuda->n_meas() == protocol.n_meas());

  const size_t n = 6;
  GnFrames a(n, host.n_meas(), host.n_out()), b(n, host.n_meas(), host.n_out());
  for (GnFrames* f : {&a, &b})
    for (size_t i = 0; i < n; ++i) f->set(i, v * (1.0 + 0.01 * static_cast<double>(i)));
  for (GnFrames* f : {&a, &b}) {
    f->values[2][5] = std::numeric_limits<float>::infinity();
    for (size_t k = 0; k < f->values[4].size(); ++k) f->values[4][k] = (k % 2 ? 1e30f : -1e30f);
  }
  for (size_t i = 0; i < n; ++i) {
    run_one(host, a.slots[i]);
    run_one(*cuda, b.slots[i]);
    CAPTURE(i);
    CHECK(a.slots[i].flags == b.slots[i].flags);
    const double scale = a.image(i).norm() > 0 ? a.image(i).norm() : 1.0;
    CHECK((b.image(i) - a.image(i)).norm() / scale < 1e-5);  // float images of float64 solves
  }
  CHECK((b.slots[2].flags & pipeline::kFlagNonFinite) != 0);
  CHECK((b.slots[4].flags & pipeline::kFlagDiverged) != 0);
  const Eigen::VectorXd truth5 = truth / 1.05;  // frame 5 holds 1.05·v
  CHECK((b.image(5) - truth5).norm() / truth5.norm() < 0.2);
}

TEST_CASE("cuda gn: the iteration replayed as a CUDA graph equals the launched one") {
  if (skip_without_cuda_gn("cuda gn graph")) return;
  for (bool compat : {false, true})
    for (int rings : {2, 6}) {  // both normal-equation sizes
      CAPTURE(compat);
      CAPTURE(rings);
      const recon::Mesh mesh = recon::layered_circle_mesh(16, rings);
      const recon::Protocol protocol = recon::make_protocol({});
      recon::ForwardModel forward(mesh, protocol);
      Eigen::VectorXd truth = Eigen::VectorXd::Constant(mesh.n_elems(), 2.0);
      for (int e = 0; e < 12; ++e) truth(e) = 4.0;
      const Eigen::VectorXd v = forward.solve(truth);
      recon::GnOptions o = eit::test::gn_streaming_options(10, 3);
      o.pyeit_compat = compat;
      gpu::CudaGaussNewton launched(mesh, protocol, o), graphed(mesh, protocol, o);
      launched.use_graph(false);
      graphed.use_graph(true);
      const recon::GnResult a = launched.solve(v), b = graphed.solve(v);
      MESSAGE("graph: ", graphed.graph_note());
      CHECK(graphed.graph_active());
      CHECK(a.iterations == b.iterations);
      CHECK((b.sigma - a.sigma).norm() / a.sigma.norm() < 1e-9);  // atomics: summation order
      // warm starts replay the same two graphs (σ and the candidate swap buffers every step)
      const recon::GnResult c = launched.solve(v, a.sigma, 3), d = graphed.solve(v, a.sigma, 3);
      CHECK((d.sigma - c.sigma).norm() / c.sigma.norm() < 1e-9);
      CHECK(graphed.timings().total > 0);
    }
}

TEST_CASE("cuda gn refuses a complex-conductivity model at set-up, saying so") {
  if (skip_without_cuda_gn("cuda gn complex refusal")) return;
  const recon::Mesh mesh = recon::layered_circle_mesh(16, 3);
  recon::GnOptions o = eit::test::gn_streaming_options(12, 2);
  o.complex_conductivity = true;
  const recon::Model model = recon::make_gn_model(mesh, recon::make_protocol({}), {}, o);
  gpu::CudaOptions co;
  co.max_batch = 1;
  CHECK_THROWS_WITH_AS(gpu::make_cuda_reconstructor(model, co),
                       doctest::Contains("the CUDA solver is real only"), std::runtime_error);
  // The same model on the host: GnReconstructor takes it (complex frames).
  CHECK_NOTHROW(pipeline::GnReconstructor(model, {}));
}
