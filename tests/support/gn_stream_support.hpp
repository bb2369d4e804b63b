#pragma once
// Shared by the streaming Gauss–Newton tests, host (tests/pipeline/test_gn_reconstructor.cpp) and
// CUDA (tests/gpu/test_cuda_gn_streaming.cpp): the "gn" model on a 4-ring 16-electrode circle
// with a centre-ring phantom and its noiseless measurements, frame slots with their own buffers,
// and one frame through a Reconstructor.
#include <doctest/doctest.h>

#include <vector>

#include <Eigen/Core>

#include "eit/pipeline/frame.hpp"
#include "eit/pipeline/reconstructor.hpp"
#include "eit/recon/forward_model.hpp"
#include "eit/recon/gn_model.hpp"
#include "eit/recon/gn_options.hpp"
#include "eit/recon/layered_circle_mesh.hpp"

namespace eit::test {

// Warm-started from the fitted scalar, no early stop; the iteration counts are the test's.
inline recon::GnOptions gn_streaming_options(int max_iterations, int frame_iterations) {
  recon::GnOptions o;
  o.start = recon::GnOptions::Start::kFitted;
  o.lambda0 = 0.1;
  o.lambda_decay = 0.5;
  o.lambda_min = 1e-3;
  o.max_iterations = max_iterations;
  o.tolerance = 0;
  o.frame_iterations = frame_iterations;
  return o;
}

// σ = 2 with the centre rings (the first 20 elements) at 3, and v = forward(σ).
struct GnPhantomCase {
  recon::Mesh mesh;
  recon::Protocol protocol;
  recon::Model model;
  Eigen::VectorXd truth, v;
};

inline GnPhantomCase gn_phantom_case(const recon::GnOptions& o) {
  GnPhantomCase c;
  c.mesh = recon::layered_circle_mesh(16, 4);
  c.protocol = recon::make_protocol({});
  c.model = recon::make_gn_model(c.mesh, c.protocol, {}, o);
  c.truth = Eigen::VectorXd::Constant(c.mesh.n_elems(), 2.0);
  for (int e = 0; e < 20; ++e) c.truth(e) = 3.0;
  c.v = recon::ForwardModel(c.mesh, c.protocol).solve(c.truth);
  return c;
}

// n frame slots, each with its own measurement and image buffer.
struct GnFrames {
  std::vector<std::vector<float>> values, images;
  std::vector<pipeline::FrameSlot> slots;
  GnFrames(size_t n, size_t n_meas, size_t n_out)
      : values(n, std::vector<float>(n_meas)), images(n, std::vector<float>(n_out)), slots(n) {
    for (size_t i = 0; i < n; ++i) {
      slots[i].values = values[i].data();
      slots[i].image = images[i].data();
    }
  }
  void set(size_t i, const Eigen::VectorXd& v) {
    for (Eigen::Index k = 0; k < v.size(); ++k)
      values[i][static_cast<size_t>(k)] = static_cast<float>(v(k));
  }
  Eigen::VectorXd image(size_t i) const {
    return Eigen::Map<const Eigen::VectorXf>(images[i].data(),
                                             static_cast<Eigen::Index>(images[i].size()))
        .cast<double>();
  }
};

// Submits one frame and waits for it.
inline void run_one(pipeline::Reconstructor& r, pipeline::FrameSlot& slot) {
  pipeline::FrameSlot* in[] = {&slot};
  std::vector<pipeline::FrameSlot*> out(r.max_batch());
  REQUIRE(r.submit(in));
  REQUIRE(r.complete(out, true) == 1);
}

}  // namespace eit::test
