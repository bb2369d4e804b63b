// Mesh quality after generation (contract in mesh_quality.hpp).
#include "eit/recon/mesh_quality.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "eit/recon/mesh_boundary.hpp"
#include "eit/recon/mesh_surface.hpp"

namespace eit::recon {
namespace {

Eigen::Vector3d point(const Mesh& m, int node) {
  Eigen::Vector3d p = Eigen::Vector3d::Zero();
  for (int d = 0; d < m.nodes.cols() && d < 3; ++d) p[d] = m.nodes(node, d);
  return p;
}

}  // namespace

MeshQuality measure_mesh_quality(const Mesh& m, double h0) {
  MeshQuality q;
  q.elements = m.n_elems();
  const bool three_d = m.dim() == 3;
  const int k = m.nodes_per_element();
  const auto on_boundary = three_d ? surface_nodes(m) : boundary_nodes(m);
  q.interior_nodes = m.n_nodes() - static_cast<int>(on_boundary.size());
  for (int e = 0; e < m.n_elems(); ++e) {
    for (int i = 0; i < k; ++i)
      for (int j = i + 1; j < k; ++j)
        q.longest_edge = std::max(q.longest_edge,
                                  (point(m, m.elements(e, i)) - point(m, m.elements(e, j))).norm());
    if (three_d) {
      q.measure += std::abs(tet_six_volume(m, e)) / 6.0;
      continue;
    }
    const Eigen::Vector3d a = point(m, m.elements(e, 0)), b = point(m, m.elements(e, 1)),
                          c = point(m, m.elements(e, 2));
    const Eigen::Vector3d u = b - a, v = c - a;
    q.measure += 0.5 * std::abs(u.x() * v.y() - u.y() * v.x());
    const Eigen::Vector3d corners[3] = {a, b, c};
    for (int i = 0; i < 3; ++i) {
      const Eigen::Vector3d x = corners[(i + 1) % 3] - corners[i],
                            y = corners[(i + 2) % 3] - corners[i];
      const double nx = x.norm(), ny = y.norm();
      const double cosine = nx > 0 && ny > 0 ? std::clamp(x.dot(y) / (nx * ny), -1.0, 1.0) : 1.0;
      q.smallest_angle_deg =
          std::min(q.smallest_angle_deg, std::acos(cosine) * 180 / std::numbers::pi);
    }
  }
  const double regular =
      three_d ? h0 * h0 * h0 / (6 * std::numbers::sqrt2) : std::numbers::sqrt3 / 4 * h0 * h0;
  q.expected_elements = regular > 0 ? q.measure / regular : 0;
  return q;
}

void require_mesh_quality(const Mesh& m, double h0, std::string_view what) {
  const MeshQuality q = measure_mesh_quality(m, h0);
  const bool three_d = m.dim() == 3;
  const char* kind = three_d ? "tetrahedra" : "triangles";
  const double min_ratio = three_d ? kMinCountRatio3d : kMinCountRatio2d;
  std::string bad;
  auto add = [&bad](const std::string& s) { bad += (bad.empty() ? "" : "; ") + s; };
  if (q.interior_nodes < 1) add("no interior node");
  if (q.elements < min_ratio * q.expected_elements)
    add(
        fmt::format("{} {} where about {:.0f} are expected for {} {:.4g} at h0 {:g} (at least "
                    "{:g} of that)",
                    q.elements, kind, q.expected_elements, three_d ? "volume" : "area", q.measure,
                    h0, min_ratio));
  if (q.longest_edge > kMaxEdgeOverH0 * h0)
    add(fmt::format("longest edge {:.4g} = {:.0f} × h0 (expected ≤ {:g} × h0)", q.longest_edge,
                    q.longest_edge / h0, kMaxEdgeOverH0));
  if (!three_d && q.smallest_angle_deg < kMinAngleDeg)
    add(fmt::format("smallest angle {:.3g}° (expected ≥ {:g}°)", q.smallest_angle_deg,
                    kMinAngleDeg));
  if (bad.empty()) return;
  throw std::runtime_error(fmt::format(
      "{} at h0 {:g} is not usable: {} ({} interior nodes of {}). The mesher could not mesh "
      "this finely; use a larger h0",
      what, h0, bad, q.interior_nodes, m.n_nodes()));
}

}  // namespace eit::recon
