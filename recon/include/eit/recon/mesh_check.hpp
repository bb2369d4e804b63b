#pragma once
// Validation of a mesh before any FEM work. check_mesh throws std::invalid_argument naming the
// first offending element or node and the values found: an index out of range, a repeated node in
// an element, an inverted (clockwise) or degenerate (zero-area) triangle, an edge shared by more
// than two triangles, a node no element uses, an electrode node that is not on the boundary, an
// electrode patch node off the boundary, a ref_node out of range. `what` prefixes the message
// (e.g. the file the mesh came from). Pure function; allocates temporaries.
#include <string_view>

#include "eit/recon/mesh.hpp"

namespace eit::recon {

void check_mesh(const Mesh& mesh, std::string_view what = "mesh");

}  // namespace eit::recon
