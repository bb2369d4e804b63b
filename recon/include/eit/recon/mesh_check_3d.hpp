#pragma once
// Validation of a tetrahedral mesh (mesh.dim() == 3) before any FEM work; check_mesh() calls it
// for 4-node elements. Throws std::invalid_argument naming the first offending element or node and
// the values found: coordinates not finite, an index out of range, a repeated node, a degenerate
// (flat) tetrahedron, an inverted one (orientation opposite to the mesh's majority), a face shared
// by more than two tetrahedra, a node no element uses, an electrode (or electrode patch node) off
// the surface, a ref_node out of range. Slivers are reported by find_slivers. Pure functions.
#include <string_view>
#include <vector>

#include "eit/recon/mesh.hpp"

namespace eit::recon {

void check_mesh_3d(const Mesh& mesh, std::string_view what = "mesh");

struct SliverReport {
  int count = 0;             // tetrahedra with quality < threshold
  int worst_element = -1;    // lowest quality element
  double worst_quality = 1;  // tet_quality() of it
};
// Shape quality of every tetrahedron against `threshold` (tet_quality, 1 = regular).
SliverReport find_slivers(const Mesh& mesh, double threshold);

// Throws std::invalid_argument naming the worst element when any tetrahedron has quality below
// `threshold` (meshes made here use 0.01; pyEIT's distmesh balls reach ~0.05).
void require_no_slivers(const Mesh& mesh, double threshold, std::string_view what = "mesh");

}  // namespace eit::recon
