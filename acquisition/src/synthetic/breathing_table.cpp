// make_breathing_table: one breath cycle of a two-lung phantom, for SyntheticPhantomSource.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/recon/forward_model.hpp"

namespace eit::acquisition {

PhantomTable make_breathing_table(const recon::Mesh& mesh, const recon::Protocol& protocol,
                                  const BreathingOptions& o) {
  if (o.positions < 4 || !(o.breaths_per_min > 0) || !(o.conductivity_drop > 0) ||
      o.conductivity_drop >= 1 || !(o.lung_radius > 0) || o.right_delay_s < 0)
    throw std::invalid_argument(fmt::format(
        "synthetic breathing: positions {} (≥ 4), rate {}/min (> 0), conductivity drop {} "
        "(0 < d < 1), lung radius {} (> 0), delay {} s (≥ 0)",
        o.positions, o.breaths_per_min, o.conductivity_drop, o.lung_radius, o.right_delay_s));
  const Eigen::RowVector2d centre = mesh.nodes.colwise().mean();
  const double radius = (mesh.nodes.rowwise() - centre).rowwise().norm().maxCoeff();
  // Lung discs: patient's right at −x, left at +x, both towards −y (dorsal with ventral = +y).
  std::vector<int> lung(static_cast<size_t>(mesh.n_elems()), 0);
  int right = 0, left = 0;
  for (int e = 0; e < mesh.n_elems(); ++e) {
    const Eigen::RowVector2d c =
        (mesh.nodes.row(mesh.elements(e, 0)) + mesh.nodes.row(mesh.elements(e, 1)) +
         mesh.nodes.row(mesh.elements(e, 2))) /
            3.0 -
        centre;
    for (int side : {-1, 1}) {
      const Eigen::RowVector2d lc(side * 0.45 * radius, -0.25 * radius);
      if ((c - lc).norm() < o.lung_radius * radius) {
        lung[static_cast<size_t>(e)] = side;
        (side < 0 ? right : left)++;
      }
    }
  }
  if (right == 0 || left == 0)
    throw std::invalid_argument(
        fmt::format("synthetic breathing: the lungs cover {} / {} elements of a {}-element mesh",
                    right, left, mesh.n_elems()));
  recon::ForwardModel forward(mesh, protocol);
  PhantomTable table;
  table.homogeneous = forward.solve();
  table.frames.resize(o.positions, table.homogeneous.size());
  const double period = 60.0 / o.breaths_per_min;
  auto wave = [&](double t) { return (1 - std::cos(2 * std::numbers::pi * t / period)) / 2; };
  for (int k = 0; k < o.positions; ++k) {
    const double t = period * k / o.positions;
    const double sl = 1 - o.conductivity_drop * wave(t);
    const double sr = 1 - o.conductivity_drop * wave(t - o.right_delay_s);
    Eigen::VectorXd perm = Eigen::VectorXd::Ones(mesh.n_elems());
    for (int e = 0; e < mesh.n_elems(); ++e) {
      if (lung[static_cast<size_t>(e)] > 0) perm[e] = sl;
      if (lung[static_cast<size_t>(e)] < 0) perm[e] = sr;
    }
    table.frames.row(k) = forward.solve(perm).transpose();
  }
  return table;
}

PhantomOptions breathing_source_options(const BreathingOptions& b, PhantomOptions o) {
  o.positions = b.positions;
  o.revolution_s = 60.0 / b.breaths_per_min;
  o.frames_per_revolution =
      std::max(1, static_cast<int>(std::lround(o.revolution_s * (o.rate_hz > 0 ? o.rate_hz : 50))));
  o.name = "breathing phantom";
  o.details = describe_breathing(b);
  return o;
}

std::string describe_breathing(const BreathingOptions& b) {
  return fmt::format(
      "{:g} breaths/min, tidal drop {:g}, right lung {:g} s behind, lung radius {:g}",
      b.breaths_per_min, b.conductivity_drop, b.right_delay_s, b.lung_radius);
}

}  // namespace eit::acquisition
