#include "eit/recon/mesh_check.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/mesh_boundary.hpp"
#include "eit/recon/mesh_check_3d.hpp"

namespace eit::recon {
namespace {

[[noreturn]] void fail(std::string_view what, const std::string& message) {
  throw std::invalid_argument(fmt::format("{}: {}", what, message));
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
  for (int i = 0; i < n_nodes; ++i)
    if (!std::isfinite(mesh.nodes(i, 0)) || !std::isfinite(mesh.nodes(i, 1)))
      fail(what,
           fmt::format("node {} has coordinates ({}, {})", i, mesh.nodes(i, 0), mesh.nodes(i, 1)));

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
  for (int i = 0; i < n_nodes; ++i)
    if (!used[static_cast<size_t>(i)])
      fail(what, fmt::format("node {} at ({}, {}) is used by no element", i, mesh.nodes(i, 0),
                             mesh.nodes(i, 1)));

  if (mesh.ref_node < 0 || mesh.ref_node >= n_nodes)
    fail(what, fmt::format("ref_node {} out of range 0..{}", mesh.ref_node, n_nodes - 1));

  std::vector<int> boundary;
  try {
    boundary = boundary_nodes(mesh);
  } catch (const std::invalid_argument& e) {
    fail(what, e.what());
  }
  const auto on_boundary = [&](int node) {
    return std::binary_search(boundary.begin(), boundary.end(), node);
  };
  for (int k = 0; k < mesh.n_electrodes(); ++k) {
    const int node = mesh.electrode_nodes[static_cast<size_t>(k)];
    if (node < 0 || node >= n_nodes)
      fail(what,
           fmt::format("electrode {} is node {}, valid nodes are 0..{}", k, node, n_nodes - 1));
    if (!on_boundary(node))
      fail(what, fmt::format("electrode {} is node {} at ({}, {}), which is not on the boundary", k,
                             node, mesh.nodes(node, 0), mesh.nodes(node, 1)));
    for (int j = 0; j < k; ++j)
      if (mesh.electrode_nodes[static_cast<size_t>(j)] == node)
        fail(what, fmt::format("electrodes {} and {} are both node {}", j, k, node));
  }
  if (!mesh.electrode_patches.empty() &&
      mesh.electrode_patches.size() != mesh.electrode_nodes.size())
    fail(what, fmt::format("{} electrode patches for {} electrodes", mesh.electrode_patches.size(),
                           mesh.electrode_nodes.size()));
  for (size_t k = 0; k < mesh.electrode_patches.size(); ++k)
    for (int node : mesh.electrode_patches[k])
      if (node < 0 || node >= n_nodes || !on_boundary(node))
        fail(what, fmt::format("electrode {} patch node {} is not a boundary node", k, node));
}

}  // namespace eit::recon
