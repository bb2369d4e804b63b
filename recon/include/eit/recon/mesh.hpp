#pragma once
// A 2-D triangular mesh with electrodes. Nodes in metres-free model units (the unit circle by
// default); triangles counter-clockwise; electrodes given by their boundary node (point electrode
// model) and, for the complete electrode model, by the boundary nodes they cover.
#include <vector>

#include <Eigen/Core>

namespace eit::recon {

using NodeMatrix = Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor>;
using ElementMatrix = Eigen::Matrix<int, Eigen::Dynamic, 3, Eigen::RowMajor>;

struct Mesh {
  NodeMatrix nodes;                  // n_nodes × 2
  ElementMatrix elements;            // n_elems × 3, 0-based, CCW
  std::vector<int> electrode_nodes;  // one centre node per electrode (point electrodes)
  // Boundary nodes under each electrode, in boundary order (CEM); empty for point electrodes.
  std::vector<std::vector<int>> electrode_patches;
  int ref_node = 0;  // grounded node (pyEIT: first of 0..n_el not an electrode)

  int n_nodes() const noexcept { return static_cast<int>(nodes.rows()); }
  int n_elems() const noexcept { return static_cast<int>(elements.rows()); }
  int n_electrodes() const noexcept { return static_cast<int>(electrode_nodes.size()); }
};

}  // namespace eit::recon
