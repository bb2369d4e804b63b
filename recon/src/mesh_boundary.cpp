#include "eit/recon/mesh_boundary.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <numbers>
#include <stdexcept>
#include <unordered_map>
#include <utility>

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


std::vector<int> outer_boundary_loop(const Mesh& mesh) {
  // Count undirected edges; keep the directed version of those used once.
  std::map<std::pair<int, int>, int> count;
  for (int e = 0; e < mesh.n_elems(); ++e)
    for (int i = 0; i < 3; ++i) {
      const int a = mesh.elements(e, i), b = mesh.elements(e, (i + 1) % 3);
      ++count[{std::min(a, b), std::max(a, b)}];
    }
  std::map<int, int> next;
  for (int e = 0; e < mesh.n_elems(); ++e)
    for (int i = 0; i < 3; ++i) {
      const int a = mesh.elements(e, i), b = mesh.elements(e, (i + 1) % 3);
      if (count[{std::min(a, b), std::max(a, b)}] != 1) continue;
      if (!next.emplace(a, b).second)
        throw std::invalid_argument(fmt::format(
            "mesh boundary: node {} starts two boundary edges (non-manifold boundary)", a));
    }
  if (next.empty()) throw std::invalid_argument("mesh boundary: mesh has no boundary edges");
  std::vector<int> best;
  std::map<int, bool> seen;
  for (const auto& [start, unused] : next) {
    if (seen[start]) continue;
    std::vector<int> loop;
    int node = start;
    do {
      seen[node] = true;
      loop.push_back(node);
      const auto it = next.find(node);
      if (it == next.end())
        throw std::invalid_argument(
            fmt::format("mesh boundary: boundary edge ends at node {} with no continuation", node));
      node = it->second;
      if (loop.size() > next.size())
        throw std::invalid_argument("mesh boundary: boundary edges do not form closed loops");
    } while (node != start);
    if (loop.size() > best.size()) best = std::move(loop);
  }
  std::rotate(best.begin(), std::min_element(best.begin(), best.end()), best.end());
  return best;
}

std::vector<int> nearest_boundary_nodes_at_pyeit_angles(const Mesh& mesh, int n_electrodes) {
  if (n_electrodes < 1)
    throw std::invalid_argument(
        fmt::format("electrode placement: {} electrodes, expected at least 1", n_electrodes));
  const std::vector<int> loop = outer_boundary_loop(mesh);
  const Eigen::Vector2d centre =
      0.5 * (mesh.nodes.colwise().minCoeff() + mesh.nodes.colwise().maxCoeff()).transpose();
  std::vector<int> out;
  for (int k = 0; k < n_electrodes; ++k) {
    const double theta = 2 * std::numbers::pi * k / n_electrodes;
    const double target = std::atan2(std::sin(theta), -std::cos(theta));
    int best = -1;
    double best_gap = 1e300;
    for (int node : loop) {
      const Eigen::Vector2d d = mesh.nodes.row(node).transpose() - centre;
      const double gap =
          std::abs(std::remainder(std::atan2(d.y(), d.x()) - target, 2 * std::numbers::pi));
      if (gap < best_gap) {
        best_gap = gap;
        best = node;
      }
    }
    if (std::find(out.begin(), out.end(), best) != out.end())
      throw std::invalid_argument(fmt::format(
          "electrode placement: electrodes {} and {} both fall on node {} ({} boundary nodes "
          "for {} electrodes; use a finer mesh)",
          std::find(out.begin(), out.end(), best) - out.begin(), k, best, loop.size(),
          n_electrodes));
    out.push_back(best);
  }
  return out;
}

std::vector<std::vector<int>> electrode_patches_by_width(const Mesh& mesh, double width) {
  if (!(width > 0))
    throw std::invalid_argument(fmt::format("electrode width {}, expected > 0", width));
  const std::vector<int> loop = outer_boundary_loop(mesh);
  const int n = static_cast<int>(loop.size());
  std::vector<double> s(n + 1, 0.0);  // arc position along the loop
  for (int i = 0; i < n; ++i)
    s[i + 1] = s[i] + (mesh.nodes.row(loop[(i + 1) % n]) - mesh.nodes.row(loop[i])).norm();
  const double perimeter = s[n];
  const double tol = 1e-9 * perimeter;
  std::vector<int> owner(n, -1);
  std::vector<std::vector<int>> patches;
  for (int k = 0; k < mesh.n_electrodes(); ++k) {
    const auto at = std::find(loop.begin(), loop.end(), mesh.electrode_nodes[k]);
    if (at == loop.end())
      throw std::invalid_argument(fmt::format("electrode {}: node {} is not on the outer boundary",
                                              k, mesh.electrode_nodes[k]));
    const int c = static_cast<int>(at - loop.begin());
    int first = c, last = c;  // walk backwards and forwards while within width/2
    auto dist = [&](int i) { return std::abs(std::remainder(s[i] - s[c], perimeter)); };
    while (first - 1 > c - n && dist(((first - 1) % n + n) % n) <= 0.5 * width + tol) --first;
    while (last + 1 < c + n && dist((last + 1) % n) <= 0.5 * width + tol) ++last;
    std::vector<int> patch;
    for (int i = first; i <= last; ++i) {
      const int j = (i % n + n) % n;
      if (owner[j] >= 0)
        throw std::invalid_argument(
            fmt::format("electrode width {}: electrodes {} and {} overlap at node {}", width,
                        owner[j], k, loop[j]));
      owner[j] = k;
      patch.push_back(loop[j]);
    }
    patches.push_back(std::move(patch));
  }
  return patches;
}

int pyeit_ref_node(const std::vector<int>& electrode_nodes) {
  const int n = static_cast<int>(electrode_nodes.size());
  for (int i = 0; i <= n; ++i)
    if (std::find(electrode_nodes.begin(), electrode_nodes.end(), i) == electrode_nodes.end())
      return i;
  return n;  // unreachable: n + 1 candidates, n electrodes
}

}  // namespace eit::recon
