#pragma once
// Internal to the Gmsh module: the vertices of the body outline at z = 0 that the 2-D and 3-D
// generators build their geometry on (gmsh_outline.hpp). Pure function; no Gmsh.
#include <vector>

#include <Eigen/Core>

#include "eit/recon/outline.hpp"

namespace eit::recon::detail {

// A vertex of the outline at arc position s.
struct OutlineVertex {
  double s;
  Eigen::Vector2d p;
  enum Kind { kElectrode, kEdge, kCorner, kHelper } kind;
  int electrode = -1;  // kElectrode and kEdge: the electrode's index (within a ring in 3-D)
};

// The vertices in arc order: n_electrodes electrode positions (electrode_positions), with
// edge_half > 0 an electrode's two edges at ± edge_half from it, the polygon's corners, and on
// curved outlines helpers so that no arc spans more than π/4 of parameter (Gmsh's arcs must span
// less than π).
std::vector<OutlineVertex> outline_vertices(const OutlinePath& path, int n_electrodes,
                                            double edge_half);

}  // namespace eit::recon::detail
