#pragma once
// Internal: the checks check_mesh (triangles) and check_mesh_3d (tetrahedra) share: finite
// coordinates, nodes used by some element, ref_node in range, electrodes and patch nodes on the
// boundary. Each throws std::invalid_argument "<what>: <message>" naming the node or electrode.
#include <string>
#include <string_view>
#include <vector>

#include "eit/recon/mesh.hpp"

namespace eit::recon::detail {

[[noreturn]] void mesh_check_fail(std::string_view what, const std::string& message);

// "(x, y)" or "(x, y, z)".
std::string point_text(const Mesh& mesh, int node);

// Every coordinate finite.
void check_node_coordinates(const Mesh& mesh, std::string_view what);

// used[i] != 0 for every node (filled by the element loop), ref_node in range.
void check_nodes_used(const Mesh& mesh, const std::vector<char>& used, std::string_view what);

// Electrodes distinct, in range and in `boundary` (sorted node indices); patches one per
// electrode, their nodes in `boundary`. `word` names the boundary: "boundary" or "surface".
void check_electrodes_on(const Mesh& mesh, const std::vector<int>& boundary,
                         std::string_view word, std::string_view what);

}  // namespace eit::recon::detail
