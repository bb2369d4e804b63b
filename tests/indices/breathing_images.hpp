#pragma once
// Synthetic breathing at image level for the indices tests: a 32×32 grid, a circular body, two
// lung discs (patient's right at −x, left at +x, both in the dorsal half). Each lung pixel's
// impedance follows A · (1 − cos 2π f (t − delay)) / 2 with the right lung delayed; images are
// returned in eitstream's sign (conductivity change = −impedance).
#include <cmath>
#include <numbers>
#include <vector>

#include "eit/indices/body_layout.hpp"
#include "eit/recon/model.hpp"

namespace eit::test {

struct Breathing {
  double rate_hz = 50;
  double breaths_per_min = 20;
  double amplitude = 1.0;    // per lung pixel (impedance units)
  double right_delay_s = 0;  // right lung lags the left
  double right_gain = 1.0;   // right lung amplitude relative to the left
  int n = 32;

  recon::GridGeometry grid() const {
    recon::GridGeometry g;
    g.nx = g.ny = n;
    g.x0 = g.y0 = -1;
    g.dx = g.dy = 2.0 / (n - 1);
    g.mask.assign(static_cast<size_t>(n * n), 1);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) {
        const double x = g.x0 + c * g.dx, y = g.y0 + r * g.dy;
        g.mask[static_cast<size_t>(r * n + c)] = x * x + y * y <= 1.0 ? 0 : 1;
      }
    return g;
  }
  // 0: none, 1: right lung, 2: left lung (discs of radius 0.3 at (∓0.45, −0.3); +y is ventral).
  int lung(size_t i) const {
    const int r = static_cast<int>(i) / n, c = static_cast<int>(i) % n;
    const double x = -1 + c * 2.0 / (n - 1), y = -1 + r * 2.0 / (n - 1);
    auto in = [&](double cx) { return (x - cx) * (x - cx) + (y + 0.3) * (y + 0.3) <= 0.09; };
    return in(-0.45) ? 1 : in(0.45) ? 2 : 0;
  }
  void frame(size_t k, std::vector<float>& image) const {
    const double t = static_cast<double>(k) / rate_hz, f = breaths_per_min / 60.0;
    auto wave = [&](double tt) { return (1 - std::cos(2 * std::numbers::pi * f * tt)) / 2; };
    image.assign(static_cast<size_t>(n * n), 0.0f);
    for (size_t i = 0; i < image.size(); ++i) {
      const int l = lung(i);
      if (l == 2) image[i] = static_cast<float>(-amplitude * wave(t));
      if (l == 1) image[i] = static_cast<float>(-amplitude * right_gain * wave(t - right_delay_s));
    }
  }
};

}  // namespace eit::test
