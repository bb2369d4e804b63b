// The outline's vertices for the Gmsh generators (see outline_vertices.hpp).
#include "outline_vertices.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace eit::recon::detail {

std::vector<OutlineVertex> outline_vertices(const OutlinePath& path, int n_electrodes,
                                            double edge_half) {
  const double P = path.perimeter(), tol = 1e-9 * P;
  const auto electrodes = electrode_positions(path.outline(), n_electrodes);
  std::vector<OutlineVertex> v;
  for (int k = 0; k < n_electrodes; ++k) {
    const double s = P * k / n_electrodes;
    v.push_back({s, electrodes[k], OutlineVertex::kElectrode, k});
    if (edge_half > 0)
      for (double side : {-1.0, 1.0}) {
        const double se = std::fmod(s + side * edge_half + P, P);
        v.push_back({se, path.point_at(se), OutlineVertex::kEdge, k});
      }
  }
  for (double s : path.corner_positions()) {
    const bool near = std::any_of(v.begin(), v.end(), [&](const OutlineVertex& x) {
      return std::abs(std::remainder(x.s - s, P)) < tol;
    });
    if (!near) v.push_back({s, path.point_at(s), OutlineVertex::kCorner});
  }
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.s < b.s; });
  if (!path.is_curved()) return v;
  std::vector<OutlineVertex> out;
  for (size_t i = 0; i < v.size(); ++i) {
    out.push_back(v[i]);
    const double s0 = v[i].s, s1 = i + 1 < v.size() ? v[i + 1].s : v[0].s + P;
    double t0 = path.parameter_at(s0), t1 = path.parameter_at(s1);
    if (t1 <= t0) t1 += 2 * std::numbers::pi;
    const int pieces = static_cast<int>(std::ceil((t1 - t0) / (std::numbers::pi / 4)));
    for (int j = 1; j < pieces; ++j) {
      const double s = s0 + (s1 - s0) * j / pieces;
      out.push_back({s, path.point_at(s), OutlineVertex::kHelper});
    }
  }
  return out;
}

}  // namespace eit::recon::detail
