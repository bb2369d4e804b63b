#pragma once
// Boundary of a 2-D triangle mesh and electrode placement on it: the edges that belong to exactly
// one triangle, the outer loop, and pyEIT's electrode placement. With counter-clockwise triangles
// each boundary edge is oriented so that the domain lies on its left. Pure functions; they
// allocate their results and share nothing.
#include <vector>

#include "eit/recon/mesh.hpp"

namespace eit::recon {


struct BoundaryEdge {
  int from;
  int to;
  int element;  // the triangle the edge belongs to
};

// Boundary edges in element order. Throws std::invalid_argument for an edge in > 2 triangles.
std::vector<BoundaryEdge> boundary_edges(const Mesh& mesh);

// Sorted, unique node indices on the boundary.
std::vector<int> boundary_nodes(const Mesh& mesh);

// For every node: the next node along the boundary (edge from→to), or -1 for interior nodes.
// Throws std::invalid_argument naming the node where the boundary is not a simple closed curve
// (a node with two outgoing boundary edges).
std::vector<int> boundary_successors(const Mesh& mesh);


// The outer boundary as a closed loop of node indices in counter-clockwise order (edges used by
// exactly one triangle; with CCW triangles the loop follows their orientation). The first node is
// the loop's smallest index. A mesh with holes has several loops: the longest is returned.
// Throws std::invalid_argument when the boundary edges do not form closed loops (non-manifold).
std::vector<int> outer_boundary_loop(const Mesh& mesh);

// pyEIT's placement on an arbitrary mesh: for electrode k, the boundary node whose polar angle
// about the bounding-box centre is nearest to that of (−cos θk, sin θk), θk = 2πk/N.
// Throws std::invalid_argument when two electrodes would share a node (mesh too coarse).
std::vector<int> nearest_boundary_nodes_at_pyeit_angles(const Mesh& mesh, int n_electrodes);

// The boundary nodes within arc length width/2 of each electrode's node along the outer boundary
// (measured along the boundary polyline), in counter-clockwise order. Used for the complete
// electrode model on meshes that carry no explicit patches. Throws when patches would overlap.
std::vector<std::vector<int>> electrode_patches_by_width(const Mesh& mesh, double width);

// pyEIT's reference node: the first of 0..n_electrodes that is not an electrode node.
int pyeit_ref_node(const std::vector<int>& electrode_nodes);

}  // namespace eit::recon
