#include "eit/recon/mesh_boundary.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

namespace eit::recon {
namespace {

uint64_t edge_key(int a, int b) {
  const auto lo = static_cast<uint64_t>(std::min(a, b));
  const auto hi = static_cast<uint64_t>(std::max(a, b));
  return (hi << 32) | lo;
}

}  // namespace

std::vector<BoundaryEdge> boundary_edges(const Mesh& mesh) {
  struct EdgeUse {
    int count = 0;
    BoundaryEdge first{};
  };
  std::unordered_map<uint64_t, EdgeUse> uses;
  uses.reserve(static_cast<size_t>(mesh.n_elems()) * 2);
  for (int e = 0; e < mesh.n_elems(); ++e) {
    for (int k = 0; k < 3; ++k) {
      const int a = mesh.elements(e, k);
      const int b = mesh.elements(e, (k + 1) % 3);
      EdgeUse& use = uses[edge_key(a, b)];
      if (++use.count > 2)
        throw std::invalid_argument(fmt::format(
            "mesh: edge ({}, {}) of element {} belongs to more than two triangles", a, b, e));
      if (use.count == 1) use.first = {a, b, e};
    }
  }
  std::vector<BoundaryEdge> edges;
  for (const auto& [key, use] : uses)
    if (use.count == 1) edges.push_back(use.first);
  std::sort(edges.begin(), edges.end(), [](const BoundaryEdge& x, const BoundaryEdge& y) {
    return x.element != y.element ? x.element < y.element : x.from < y.from;
  });
  return edges;
}

std::vector<int> boundary_nodes(const Mesh& mesh) {
  std::vector<int> nodes;
  for (const BoundaryEdge& edge : boundary_edges(mesh)) {
    nodes.push_back(edge.from);
    nodes.push_back(edge.to);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

std::vector<int> boundary_successors(const Mesh& mesh) {
  std::vector<int> next(static_cast<size_t>(mesh.n_nodes()), -1);
  for (const BoundaryEdge& edge : boundary_edges(mesh)) {
    int& slot = next[static_cast<size_t>(edge.from)];
    if (slot != -1)
      throw std::invalid_argument(fmt::format(
          "mesh: boundary node {} starts two boundary edges (to {} and {}); the boundary is not "
          "a simple closed curve",
          edge.from, slot, edge.to));
    slot = edge.to;
  }
  return next;
}

}  // namespace eit::recon
