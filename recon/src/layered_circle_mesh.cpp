#include "eit/recon/layered_circle_mesh.hpp"

#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/mesh_boundary.hpp"

namespace eit::recon {

Mesh layered_circle_mesh(int n_el, int n_rings) {
  if (n_el < 3 || n_rings < 1)
    throw std::invalid_argument(fmt::format(
        "layered circle mesh: {} electrodes, {} rings; expected ≥ 3 and ≥ 1", n_el, n_rings));
  // first[i] = index of ring i's first node; ring 0 is the centre.
  std::vector<int> first(n_rings + 2, 0);
  first[1] = 1;
  for (int i = 1; i <= n_rings; ++i) first[i + 1] = first[i] + n_el * i;
  Mesh m;
  m.nodes.resize(first[n_rings + 1], 2);
  m.nodes.row(0) << 0, 0;
  for (int i = 1; i <= n_rings; ++i)
    for (int j = 0; j < n_el * i; ++j) {
      const double t = 2 * std::numbers::pi * j / (n_el * i), r = static_cast<double>(i) / n_rings;
      m.nodes.row(first[i] + j) << -r * std::cos(t), r * std::sin(t);
    }
  std::vector<std::array<int, 3>> tris;
  // Between rings i−1 and i: per sector, i outer and i−1 inner segments, merged by angle.
  for (int i = 1; i <= n_rings; ++i) {
    const int n_in = i == 1 ? 1 : n_el * (i - 1), n_out = n_el * i;
    int a = 0, b = 0;  // steps taken on the inner and outer ring
    while (a < (i == 1 ? 0 : n_in) || b < n_out) {
      const int in0 = i == 1 ? 0 : first[i - 1] + a % n_in;
      const int out0 = first[i] + b % n_out;
      const double next_in = i == 1 ? 2.0 : static_cast<double>(a + 1) / n_in;
      const double next_out = static_cast<double>(b + 1) / n_out;
      if (b < n_out && (next_out <= next_in || a >= n_in)) {
        tris.push_back({in0, out0, first[i] + (b + 1) % n_out});
        ++b;
      } else {
        tris.push_back({in0, out0, first[i - 1] + (a + 1) % n_in});
        ++a;
      }
    }
  }
  m.elements.resize(static_cast<Eigen::Index>(tris.size()), 3);
  for (size_t e = 0; e < tris.size(); ++e) {
    auto [p, q, r] = tris[e];
    const Eigen::Vector2d a = m.nodes.row(p), b = m.nodes.row(q), c = m.nodes.row(r);
    if ((b.x() - a.x()) * (c.y() - a.y()) - (b.y() - a.y()) * (c.x() - a.x()) < 0) std::swap(q, r);
    m.elements.row(static_cast<Eigen::Index>(e)) << p, q, r;
  }
  for (int k = 0; k < n_el; ++k) m.electrode_nodes.push_back(first[n_rings] + k * n_rings);
  m.ref_node = pyeit_ref_node(m.electrode_nodes);
  return m;
}

}  // namespace eit::recon
