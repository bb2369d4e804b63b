#include "eit/recon/mesh_check_3d.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/mesh_surface.hpp"
#include "mesh_check_common.hpp"

namespace eit::recon {
namespace {

using detail::point_text;

[[noreturn]] void fail(std::string_view what, const std::string& message) {
  detail::mesh_check_fail(what, message);
}

std::string tet_text(const Mesh& mesh, int e) {
  return fmt::format("element {} = ({}, {}, {}, {})", e, mesh.elements(e, 0), mesh.elements(e, 1),
                     mesh.elements(e, 2), mesh.elements(e, 3));
}

}  // namespace

void check_mesh_3d(const Mesh& mesh, std::string_view what) {
  if (mesh.elements.cols() != 4) fail(what, fmt::format("{} nodes per element, expected 4",
                                                        mesh.elements.cols()));
  if (mesh.nodes.cols() != 3)
    fail(what, fmt::format("nodes have {} coordinates, a tetrahedral mesh needs 3",
                           mesh.nodes.cols()));
  const int n_nodes = mesh.n_nodes();
  if (n_nodes < 4) fail(what, fmt::format("{} nodes, need at least 4", n_nodes));
  if (mesh.n_elems() < 1) fail(what, "no elements");
  detail::check_node_coordinates(mesh, what);

  std::vector<char> used(static_cast<size_t>(n_nodes), 0);
  int positive = 0, negative = 0, first_positive = -1, first_negative = -1;
  for (int e = 0; e < mesh.n_elems(); ++e) {
    for (int k = 0; k < 4; ++k) {
      const int node = mesh.elements(e, k);
      if (node < 0 || node >= n_nodes)
        fail(what, fmt::format("{} uses node {}, valid nodes are 0..{}", tet_text(mesh, e), node,
                               n_nodes - 1));
      for (int j = 0; j < k; ++j)
        if (mesh.elements(e, j) == node)
          fail(what, fmt::format("{} repeats node {}", tet_text(mesh, e), node));
    }
    double longest = 0;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < i; ++j)
        longest = std::max(longest, (mesh.nodes.row(mesh.elements(e, i)) -
                                     mesh.nodes.row(mesh.elements(e, j))).norm());
    const double six_v = tet_six_volume(mesh, e);
    if (std::abs(six_v) <= 1e-12 * longest * longest * longest)
      fail(what, fmt::format("{} is degenerate (flat): volume {:.3g}, longest edge {:.3g}",
                             tet_text(mesh, e), six_v / 6, longest));
    if (six_v > 0) {
      if (positive++ == 0) first_positive = e;
    } else if (negative++ == 0) {
      first_negative = e;
    }
    for (int k = 0; k < 4; ++k) used[static_cast<size_t>(mesh.elements(e, k))] = 1;
  }
  if (positive > 0 && negative > 0) {
    const bool minority_negative = negative <= positive;
    const int e = minority_negative ? first_negative : first_positive;
    fail(what, fmt::format("{} is inverted: signed volume {:.6g}, while {} of {} tetrahedra have "
                           "the opposite orientation",
                           tet_text(mesh, e), tet_six_volume(mesh, e) / 6,
                           minority_negative ? positive : negative, mesh.n_elems()));
  }
  detail::check_nodes_used(mesh, used, what);
  std::vector<int> surface;
  try {
    surface = surface_nodes(mesh);
  } catch (const std::invalid_argument& e) {
    fail(what, e.what());
  }
  detail::check_electrodes_on(mesh, surface, "surface", what);
}

SliverReport find_slivers(const Mesh& mesh, double threshold) {
  SliverReport r;
  for (int e = 0; e < mesh.n_elems(); ++e) {
    const double q = tet_quality(mesh, e);
    if (q < threshold) ++r.count;
    if (q < r.worst_quality) {
      r.worst_quality = q;
      r.worst_element = e;
    }
  }
  return r;
}

void require_no_slivers(const Mesh& mesh, double threshold, std::string_view what) {
  const SliverReport r = find_slivers(mesh, threshold);
  if (r.count > 0)
    fail(what, fmt::format("{} sliver tetrahedra with quality < {}; the worst is {} with quality "
                           "{:.3g} (6√2|V|/l_rms³, 1 = regular)",
                           r.count, threshold, tet_text(mesh, r.worst_element), r.worst_quality));
}

}  // namespace eit::recon
