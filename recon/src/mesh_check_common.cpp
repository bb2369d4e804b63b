#include "mesh_check_common.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace eit::recon::detail {

void mesh_check_fail(std::string_view what, const std::string& message) {
  throw std::invalid_argument(fmt::format("{}: {}", what, message));
}

std::string point_text(const Mesh& mesh, int node) {
  std::string s = "(";
  for (Eigen::Index c = 0; c < mesh.nodes.cols(); ++c)
    s += fmt::format("{}{}", c ? ", " : "", mesh.nodes(node, c));
  return s + ")";
}

void check_node_coordinates(const Mesh& mesh, std::string_view what) {
  for (int i = 0; i < mesh.n_nodes(); ++i)
    if (!mesh.nodes.row(i).allFinite())
      mesh_check_fail(what, fmt::format("node {} has coordinates {}", i, point_text(mesh, i)));
}

void check_nodes_used(const Mesh& mesh, const std::vector<char>& used, std::string_view what) {
  for (int i = 0; i < mesh.n_nodes(); ++i)
    if (!used[static_cast<size_t>(i)])
      mesh_check_fail(what,
                      fmt::format("node {} at {} is used by no element", i, point_text(mesh, i)));
  if (mesh.ref_node < 0 || mesh.ref_node >= mesh.n_nodes())
    mesh_check_fail(what, fmt::format("ref_node {} out of range 0..{}", mesh.ref_node,
                                      mesh.n_nodes() - 1));
}

void check_electrodes_on(const Mesh& mesh, const std::vector<int>& boundary,
                         std::string_view word, std::string_view what) {
  const int n_nodes = mesh.n_nodes();
  const auto on = [&](int node) {
    return std::binary_search(boundary.begin(), boundary.end(), node);
  };
  for (int k = 0; k < mesh.n_electrodes(); ++k) {
    const int node = mesh.electrode_nodes[static_cast<size_t>(k)];
    if (node < 0 || node >= n_nodes)
      mesh_check_fail(what, fmt::format("electrode {} is node {}, valid nodes are 0..{}", k, node,
                                        n_nodes - 1));
    if (!on(node))
      mesh_check_fail(what, fmt::format("electrode {} is node {} at {}, which is not on the {}", k,
                                        node, point_text(mesh, node), word));
    for (int j = 0; j < k; ++j)
      if (mesh.electrode_nodes[static_cast<size_t>(j)] == node)
        mesh_check_fail(what, fmt::format("electrodes {} and {} are both node {}", j, k, node));
  }
  if (!mesh.electrode_patches.empty() &&
      mesh.electrode_patches.size() != mesh.electrode_nodes.size())
    mesh_check_fail(what, fmt::format("{} electrode patches for {} electrodes",
                                      mesh.electrode_patches.size(), mesh.electrode_nodes.size()));
  for (size_t k = 0; k < mesh.electrode_patches.size(); ++k)
    for (int node : mesh.electrode_patches[k])
      if (node < 0 || node >= n_nodes || !on(node))
        mesh_check_fail(what,
                        fmt::format("electrode {} patch node {} is not a {} node", k, node, word));
}

}  // namespace eit::recon::detail
