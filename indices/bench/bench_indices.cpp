// bench_indices: what all the indices cost per frame for a 32×32 image at 1,000 frames/s
// (breathing at 30/min, so breaths complete and their per-breath indices are included), side by
// side with the reference cost of the frame's own reconstruction (a 1024 × 208 float GEMV, as
// the CPU reconstructor does). Prints per-frame times, the share of one core at 1,000 frames/s
// and the ratio to the GEMV. Usage: bench_indices [seconds of signal, default 60]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <Eigen/Core>

#include "eit/indices/breath_json.hpp"
#include "eit/indices/indices_engine.hpp"

using namespace eit::indices;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::stod(argv[1]) : 60;
  const double rate = 1000;
  const int n = 32;
  eit::recon::GridGeometry g;
  g.nx = g.ny = n;
  g.x0 = g.y0 = -1;
  g.dx = g.dy = 2.0 / (n - 1);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      const double x = -1 + c * g.dx, y = -1 + r * g.dy;
      g.mask.push_back(x * x + y * y <= 1 ? 0 : 1);
    }
  IndicesOptions o;
  o.rate_hz = rate;
  IndicesEngine e(BodyLayout::from_grid(g), o);
  std::vector<char> json(breath_json_capacity(e.layout()));

  // A frame set of one breath period (2 s) with noise, replayed.
  const size_t period = 2000, frames = static_cast<size_t>(seconds * rate);
  std::vector<float> images(period * n * n);
  std::mt19937 rng(1);
  std::normal_distribution<float> noise(0, 0.01f);
  for (size_t k = 0; k < period; ++k)
    for (size_t i = 0; i < static_cast<size_t>(n * n); ++i) {
      const double w = (1 - std::cos(2 * std::numbers::pi * k / period)) / 2;
      images[k * n * n + i] = static_cast<float>(-w * (1 + 0.3 * std::sin(i * 0.1))) + noise(rng);
    }
  size_t breaths = 0;
  const auto t0 = Clock::now();
  for (size_t k = 0; k < frames; ++k) {
    const auto* b = e.push({&images[(k % period) * n * n], static_cast<size_t>(n * n)}, k, 0);
    if (b) {
      ++breaths;
      write_breath_json(*b, e.layout(), "bench", true, json);
    }
  }
  const double indices_ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
                            static_cast<double>(frames);

  // Reference: the reconstruction of the same frame, image = H · dv (1024 × 208, float).
  Eigen::MatrixXf H = Eigen::MatrixXf::Random(n * n, 208);
  Eigen::VectorXf dv = Eigen::VectorXf::Random(208), img(n * n);
  const size_t reps = 20000;
  const auto t1 = Clock::now();
  for (size_t k = 0; k < reps; ++k) {
    img.noalias() = H * dv;
    dv[k % 208] += img[k % (n * n)] * 1e-9f;
  }
  const double gemv_ns = std::chrono::duration<double, std::nano>(Clock::now() - t1).count() /
                         static_cast<double>(reps);

  fmt::print("bench_indices: 32×32 grid ({} body pixels), {} frames at {} fps, {} breaths\n",
             e.layout().n_inside(), frames, rate, breaths);
  fmt::print(
      "  indices (all, incl. per-breath and JSON): {:.2f} µs/frame = {:.2f} % of one core at 1000 "
      "fps\n",
      indices_ns / 1e3, indices_ns * rate / 1e9 * 100);
  fmt::print("  reference GEMV 1024×208 float:            {:.2f} µs/frame\n", gemv_ns / 1e3);
  fmt::print("  ratio indices / GEMV:                      {:.2f}\n", indices_ns / gemv_ns);
  return 0;
}
