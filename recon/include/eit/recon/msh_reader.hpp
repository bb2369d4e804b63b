#pragma once
// Gmsh .msh import (ASCII, format 2.2 and 4.1), without Gmsh itself.
//
// Reads the nodes and the 3-node triangles (element type 2); every other element type is used only
// to find electrodes or rejected (quadrilaterals, second-order and 3-D elements). Nodes that no
// triangle uses are dropped; triangles are turned counter-clockwise.
// Electrodes, in order of preference:
//   * physical groups named like "electrode1", "elec_2", "el3", "E4" (case-insensitive, numbered
//     1..N or 0..N−1; sorted by number): a point group gives the electrode's node, a line group
//     gives its patch (complete electrode model) and the patch's middle node;
//   * otherwise `n_electrodes` > 0: the boundary nodes nearest pyEIT's angles
//     (mesh_boundary.hpp, nearest_boundary_nodes_at_pyeit_angles).
// Errors throw std::runtime_error naming the file, line, section and field.
#include <filesystem>

#include "eit/recon/mesh.hpp"

namespace eit::recon {

struct MshImportOptions {
  int n_electrodes = 0;  // 0: electrodes from physical groups (an error when there are none)
};

Mesh read_msh(const std::filesystem::path& path, const MshImportOptions& options = {});

}  // namespace eit::recon
