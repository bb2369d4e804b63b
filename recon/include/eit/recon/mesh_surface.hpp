#pragma once
// Surface of a 3-D tetrahedral mesh: the faces that belong to exactly one tetrahedron, oriented
// outwards (normal (b − a) × (c − a) points out of the domain), and quality measures of
// tetrahedra. Pure functions; they allocate their results and share nothing.
#include <vector>

#include "eit/recon/mesh.hpp"

namespace eit::recon {

struct SurfaceFace {
  int a, b, c;   // outward orientation
  int element;   // the tetrahedron the face belongs to
};

// Boundary faces in element order. Throws std::invalid_argument naming the element when a face
// belongs to more than two tetrahedra. Requires mesh.dim() == 3.
std::vector<SurfaceFace> surface_faces(const Mesh& mesh);

// Sorted, unique node indices on the surface.
std::vector<int> surface_nodes(const Mesh& mesh);

// 6 × signed volume det[p1 − p0, p2 − p0, p3 − p0] of tetrahedron e.
double tet_six_volume(const Mesh& mesh, int e);

// Shape quality q = 6√2 |V| / l_rms³ ∈ [0, 1] (1 for the regular tetrahedron; slivers → 0).
double tet_quality(const Mesh& mesh, int e);

// Nodes (sorted) of the surface triangles whose centroid lies within `radius` (Euclidean) of
// `node`: a disc-shaped electrode patch that follows the mesh (its triangles' area approaches
// π radius² as the mesh is refined).
std::vector<int> disc_patch(const Mesh& mesh, int node, double radius);

// Face adjacency of tetrahedra (elements sharing a face): for each element the neighbours.
std::vector<std::vector<int>> tet_face_neighbours(const Mesh& mesh);

}  // namespace eit::recon
