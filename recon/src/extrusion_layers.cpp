// Layers of the extruded 3-D mesher (extrusion_layers.hpp).
#include "extrusion_layers.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace eit::recon::detail {

double graded_size(double d, double fine, double coarse, double full, double ramp) {
  if (d <= full) return fine;
  if (d >= full + ramp) return coarse;
  return fine + (coarse - fine) * (d - full) / ramp;
}

std::vector<double> graded_layer_fractions(double z0, double z1, const std::vector<double>& centres,
                                           double fine, double coarse, double full, double ramp) {
  // The integral of dz / size on a fine grid (midpoint rule); size is piecewise linear, so 4,096
  // steps put the layer interfaces within ~1e-4 of a layer of where the exact integral would.
  constexpr int kSteps = 4096;
  const double dz = (z1 - z0) / kSteps;
  std::vector<double> cumulative(kSteps + 1, 0.0);
  for (int i = 0; i < kSteps; ++i) {
    const double z = z0 + (i + 0.5) * dz;
    double d = std::numeric_limits<double>::infinity();
    for (double c : centres) d = std::min(d, std::abs(z - c));
    cumulative[i + 1] = cumulative[i] + dz / graded_size(d, fine, coarse, full, ramp);
  }
  const double total = cumulative.back();
  const int layers = std::max(1, static_cast<int>(std::ceil(total - 1e-9)));
  std::vector<double> fractions;
  int i = 0;
  for (int k = 1; k < layers; ++k) {
    const double target = total * k / layers;
    while (cumulative[i + 1] < target) ++i;
    const double t = (target - cumulative[i]) / (cumulative[i + 1] - cumulative[i]);
    fractions.push_back((i + t) / kSteps);
  }
  fractions.push_back(1.0);
  return fractions;
}

}  // namespace eit::recon::detail
