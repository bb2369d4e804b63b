#include "eit/recon/mesh_check.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/mesh_boundary.hpp"
#include "eit/recon/mesh_check_3d.hpp"
#include "mesh_check_common.hpp"

namespace eit::recon {
namespace {

[[noreturn]] void fail(std::string_view what, const std::string& message) {
  detail::mesh_check_fail(what, message);
}

}  // namespace

void check_mesh(const Mesh& mesh, std::string_view what) {
  if (mesh.elements.cols() == 4) return check_mesh_3d(mesh, what);
  if (mesh.elements.cols() != 3 || mesh.nodes.cols() != 2)
    fail(what, fmt::format("{} nodes per element and {} coordinates per node, expected 3 and 2 "
                           "(triangles) or 4 and 3 (tetrahedra)",
                           mesh.elements.cols(), mesh.nodes.cols()));
  const int n_nodes = mesh.n_nodes();
  if (n_nodes < 3) fail(what, fmt::format("{} nodes, need at least 3", n_nodes));
  if (mesh.n_elems() < 1) fail(what, "no elements");
  detail::check_node_coordinates(mesh, what);

  std::vector<char> used(static_cast<size_t>(n_nodes), 0);
  for (int e = 0; e < mesh.n_elems(); ++e) {
    const int a = mesh.elements(e, 0), b = mesh.elements(e, 1), c = mesh.elements(e, 2);
    for (int node : {a, b, c})
      if (node < 0 || node >= n_nodes)
        fail(what, fmt::format("element {} = ({}, {}, {}) uses node {}, valid nodes are 0..{}", e,
                               a, b, c, node, n_nodes - 1));
    if (a == b || b == c || a == c)
      fail(what, fmt::format("element {} = ({}, {}, {}) repeats a node", e, a, b, c));
    const double x1 = mesh.nodes(b, 0) - mesh.nodes(a, 0), y1 = mesh.nodes(b, 1) - mesh.nodes(a, 1);
    const double x2 = mesh.nodes(c, 0) - mesh.nodes(a, 0), y2 = mesh.nodes(c, 1) - mesh.nodes(a, 1);
    const double area = 0.5 * (x1 * y2 - x2 * y1);
    const double longest = std::max(
        {x1 * x1 + y1 * y1, x2 * x2 + y2 * y2, (x2 - x1) * (x2 - x1) + (y2 - y1) * (y2 - y1)});
    if (std::abs(area) <= 1e-12 * longest)
      fail(what, fmt::format("element {} = ({}, {}, {}) is degenerate: area {:.3g}, longest edge "
                             "{:.3g}",
                             e, a, b, c, area, std::sqrt(longest)));
    if (area < 0)
      fail(what, fmt::format("element {} = ({}, {}, {}) is inverted (clockwise): signed area "
                             "{:.6g}, expected > 0",
                             e, a, b, c, area));
    used[static_cast<size_t>(a)] = used[static_cast<size_t>(b)] = used[static_cast<size_t>(c)] = 1;
  }
  detail::check_nodes_used(mesh, used, what);
  std::vector<int> boundary;
  try {
    boundary = boundary_nodes(mesh);
  } catch (const std::invalid_argument& e) {
    fail(what, e.what());
  }
  detail::check_electrodes_on(mesh, boundary, "boundary", what);
}

}  // namespace eit::recon
