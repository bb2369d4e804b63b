#pragma once
// Quality of a generated mesh against the size it was asked for (h0), checked after generation:
// a mesher that gives up (Gmsh at h0 = 0.001 on the unit disc returned 8,400 triangles instead of
// ~7 million, 122 interior nodes, edges as long as the diameter and angles of 0.06°) must not
// yield a model silently. Measures, for triangles (2-D) and tetrahedra (3-D):
//   - interior nodes (not on the boundary / surface): at least one;
//   - element count against measure / (regular element of edge h0): at least kMinCountRatio2d
//     (2-D) or kMinCountRatio3d (3-D) of it (Gmsh gives 1.0–3 in 2-D, more with refinement);
//   - the longest edge: at most kMaxEdgeOverH0 · h0 (Gmsh gives ≤ 1.4 h0);
//   - 2-D: the smallest angle, at least kMinAngleDeg (Gmsh gives ≥ 22° away from sharp outline
//     corners); 3-D slivers are
//     mesh_check_3d.hpp's require_no_slivers.
// Pure functions; allocate temporaries; any thread.
#include <string_view>

#include "eit/recon/mesh.hpp"

namespace eit::recon {

inline constexpr double kMinCountRatio2d = 0.5;
inline constexpr double kMinCountRatio3d = 0.25;
inline constexpr double kMaxEdgeOverH0 = 3.0;
inline constexpr double kMinAngleDeg = 2.0;  // low: a polygon outline may have sharp corners

struct MeshQuality {
  int elements = 0;
  int interior_nodes = 0;
  double measure = 0;            // total area (2-D) or volume (3-D)
  double expected_elements = 0;  // measure / measure of the regular element of edge h0
  double longest_edge = 0;
  double smallest_angle_deg = 180;  // 2-D only (180 for 3-D meshes)
};

MeshQuality measure_mesh_quality(const Mesh& mesh, double h0);

// Throws std::runtime_error naming `what`, h0, every check that failed with the value found and
// the bound, and what to do (a larger h0), when the mesh fails any check above.
void require_mesh_quality(const Mesh& mesh, double h0, std::string_view what);

}  // namespace eit::recon
