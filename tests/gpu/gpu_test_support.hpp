#pragma once
// Shared by the GPU tests: random models, frames, the float64 CPU reference, and the visible
// skip when no CUDA device is present. Fresh random inputs each run (seed printed on failure).
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "eit/gpu/cuda_backend.hpp"
#include "eit/gpu/cuda_gauss_newton.hpp"
#include "eit/pipeline/frame_pool.hpp"
#include "eit/recon/model.hpp"
#include "test_data.hpp"

namespace eit::gpu::test {

// True (after printing "SKIPPED: <what>: no CUDA device: <why>") when the test cannot run here.
inline bool skip_without_cuda(const char* what) {
  std::string why;
  if (cuda_available(&why)) return false;
  eit::test::report_skip(what, "no CUDA device: " + why);
  return true;
}

// The same for the CUDA Gauss–Newton solver (the eit_gpu_gn plugin).
inline bool skip_without_cuda_gn(const char* what) {
  std::string why;
  if (cuda_gn_available(&why)) return false;
  eit::test::report_skip(what, "no CUDA device: " + why);
  return true;
}

// The ways a single frame can go: launched kernels, or one of the two persistent kernels. On a
// device of compute capability ≥ 9.0 the cluster case must really run the one-cluster kernel.
struct SingleFramePath {
  const char* name;
  gpu::CudaOptions::Mode mode;
  gpu::CudaOptions::PersistentKernel kernel;
};
inline constexpr SingleFramePath kSingleFramePaths[] = {
    {"launch", gpu::CudaOptions::Mode::kLaunch, gpu::CudaOptions::PersistentKernel::kAuto},
    {"persistent, one cluster", gpu::CudaOptions::Mode::kPersistent,
     gpu::CudaOptions::PersistentKernel::kCluster},
    {"persistent, relay", gpu::CudaOptions::Mode::kPersistent,
     gpu::CudaOptions::PersistentKernel::kRelay},
};
inline void use_path(gpu::CudaOptions& o, const SingleFramePath& path) {
  o.mode = path.mode;
  o.persistent_kernel = path.kernel;
}
// After at least one single frame: the path asked for is the one that ran.
inline void check_path_ran(const pipeline::Reconstructor& r, const SingleFramePath& path) {
  const gpu::CudaStats st = gpu::cuda_stats(r);
  INFO("path " << path.name);
  if (path.mode == gpu::CudaOptions::Mode::kLaunch) {
    CHECK(st.persistent_frames == 0);
    return;
  }
  CHECK(st.persistent_frames > 0);
  CHECK(st.persistent_cluster == (path.kernel == gpu::CudaOptions::PersistentKernel::kCluster));
}

// A FramePool in r's own frame memory, bound to r (destroy it before r).
inline std::unique_ptr<pipeline::FramePool> bound_pool(pipeline::Reconstructor& r, size_t slots) {
  auto pool =
      std::make_unique<pipeline::FramePool>(slots, r.n_meas(), r.n_out(), r.frame_allocator());
  r.bind_frames(*pool);
  return pool;
}

inline uint64_t fresh_seed() { return std::random_device{}() * 0x9E3779B97F4A7C15ull ^ 12345; }

inline recon::Model random_model(size_t n_out, size_t n_meas, std::mt19937_64& rng,
                                 bool normalize) {
  std::normal_distribution<float> h(0.f, 1.f);
  std::uniform_real_distribution<double> ref(0.5, 2.0);
  recon::Model m;
  m.algorithm = "random";
  m.H.resize(n_out, n_meas);
  for (Eigen::Index i = 0; i < m.H.size(); ++i) m.H.data()[i] = h(rng);
  m.v_ref.resize(n_meas);
  for (size_t i = 0; i < n_meas; ++i) m.v_ref[i] = (rng() & 1 ? 1 : -1) * ref(rng);
  m.normalize = normalize;
  return m;
}

// v = v_ref · (1 + 5% noise): differences small against v, as in real EIT.
inline void random_frame(const recon::Model& m, std::mt19937_64& rng, float* v) {
  std::normal_distribution<double> noise(0.0, 0.05);
  for (size_t i = 0; i < m.n_meas(); ++i) v[i] = static_cast<float>(m.v_ref[i] * (1 + noise(rng)));
}

inline void poison(float* image, size_t n) {
  for (size_t i = 0; i < n; ++i) image[i] = std::numeric_limits<float>::quiet_NaN();
}

// image = H · w ⊙ (v − v_ref) in float64.
inline std::vector<double> reference_image(const recon::Model& m, const float* v) {
  std::vector<double> dv(m.n_meas()), out(m.n_out(), 0.0);
  for (size_t j = 0; j < m.n_meas(); ++j) {
    const double w = m.normalize ? 1.0 / std::abs(m.v_ref[j]) : 1.0;
    dv[j] = (static_cast<double>(v[j]) - m.v_ref[j]) * w;
  }
  for (size_t i = 0; i < m.n_out(); ++i) {
    const float* row = m.H.data() + i * m.n_meas();
    double s = 0;
    for (size_t j = 0; j < m.n_meas(); ++j) s += static_cast<double>(row[j]) * dv[j];
    out[i] = s;
  }
  return out;
}

// ‖image − ref‖ / ‖ref‖; infinity when any element is NaN (unwritten poison).
inline double relative_error(const float* image, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(image[i])) return std::numeric_limits<double>::infinity();
    num += (image[i] - ref[i]) * (image[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

inline bool all_zero(const float* image, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (image[i] != 0.f) return false;
  return true;
}

}  // namespace eit::gpu::test
