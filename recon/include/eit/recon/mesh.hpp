#pragma once
// A 2-D triangle or 3-D tetrahedron mesh with electrodes. Nodes in metres-free model units (the
// unit circle or ball by default). The dimension follows the elements: n_elems × 3 (triangles,
// nodes n × 2, counter-clockwise) or n_elems × 4 (tetrahedra, nodes n × 3, one orientation for
// all: Gmsh's det[p1−p0, p2−p0, p3−p0] > 0 or pyEIT's < 0). Electrodes are given by their boundary node (point electrode
// model) and, for the complete electrode model, by the boundary nodes they cover.
#include <vector>

#include <Eigen/Core>

namespace eit::recon {

// Column counts are dynamic (2 or 3 coordinates, 3 or 4 nodes per element); storage row-major.
using NodeMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ElementMatrix = Eigen::Matrix<int, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct Mesh {
  NodeMatrix nodes;                  // n_nodes × dim
  ElementMatrix elements;            // n_elems × (dim + 1), 0-based, positively oriented
  std::vector<int> electrode_nodes;  // one centre node per electrode (point electrodes)
  // Boundary nodes under each electrode, in boundary order (CEM); empty for point electrodes.
  std::vector<std::vector<int>> electrode_patches;
  int ref_node = 0;  // grounded node (pyEIT: first of 0..n_el not an electrode)

  int n_nodes() const noexcept { return static_cast<int>(nodes.rows()); }
  int n_elems() const noexcept { return static_cast<int>(elements.rows()); }
  int n_electrodes() const noexcept { return static_cast<int>(electrode_nodes.size()); }
  // 3 for tetrahedra (4 nodes per element), 2 otherwise.
  int dim() const noexcept { return elements.cols() == 4 ? 3 : 2; }
  int nodes_per_element() const noexcept { return dim() + 1; }
};

}  // namespace eit::recon
