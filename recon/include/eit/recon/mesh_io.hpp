#pragma once
// Mesh import from a folder of CSV files, the layout of pyEIT exports
// (../shared/data/pyeit/h0_0.1):
//   nodes.csv     n × 2 or n × 3 (x, y[, z]; z is dropped)
//   elements.csv  m × 3, 0-based node indices, counter-clockwise
//   el_pos.csv    one electrode node index per line (or one comma-separated row)
// No header, comma separated. The mesh is checked (check_mesh) before it is returned; every error
// is a std::invalid_argument (std::runtime_error when a file cannot be opened) naming the file,
// line and value. Allocates; no state.
#include <filesystem>
#include <vector>

#include "eit/recon/mesh.hpp"

namespace eit::recon {

Mesh load_mesh_csv_folder(const std::filesystem::path& folder);

// pyEIT's grounded node: pyeit_ref_node() in mesh_boundary.hpp.

}  // namespace eit::recon
