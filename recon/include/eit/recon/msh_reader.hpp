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
//
// Tetrahedral files (element type 4 present) go to read_msh_tetrahedra: Gmsh's own reader, in the
// Gmsh module (mesh_generator.hpp says how it is loaded). Nodes that no tetrahedron uses are
// dropped, nodes numbered in tag order, tetrahedra turned positive. Electrodes come from physical
// groups named as above: a surface group (dim 2) is the electrode's patch (all its nodes, for the
// complete electrode model), a point group (dim 0) of the same number its centre node; a surface
// group alone is centred on its node nearest the patch's mean position. Every electrode needs a
// group (n_electrodes placing is 2-D only). Throws std::runtime_error naming the file and group.
#include <filesystem>

#include "eit/recon/mesh.hpp"

namespace eit::recon {

struct MshImportOptions {
  int n_electrodes = 0;  // 0: electrodes from physical groups (an error when there are none)
};

Mesh read_msh(const std::filesystem::path& path, const MshImportOptions& options = {});
Mesh read_msh_tetrahedra(const std::filesystem::path& path);

}  // namespace eit::recon
