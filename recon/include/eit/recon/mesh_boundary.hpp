#pragma once
// Boundary of a 2-D triangle mesh: the edges that belong to exactly one triangle. With
// counter-clockwise triangles each boundary edge is returned oriented from→to so that the domain
// lies on its left (the outer boundary is walked counter-clockwise). Pure functions; allocate.
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

}  // namespace eit::recon
