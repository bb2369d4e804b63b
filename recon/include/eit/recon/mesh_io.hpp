#pragma once
// Mesh import from a folder of CSV files, the layout of pyEIT exports
// (../shared/data/pyeit/h0_0.1):
//   nodes.csv     n × 2 or n × 3 (x, y[, z]; z is dropped for triangles)
//   elements.csv  m × 3 (triangles, counter-clockwise) or m × 4 (tetrahedra, as pyEIT's 3-D
//                 meshes, ../shared/data/pyeit/ball3d_h0_0.2), 0-based node indices
//   el_pos.csv    one electrode node index per line (or one comma-separated row)
// No header, comma separated; each file may instead be gzip'd (name.csv.gz, read with zlib). The mesh is checked (check_mesh) before it is returned; every error
// is a std::invalid_argument (std::runtime_error when a file cannot be opened) naming the file,
// line and value. Allocates; no state.
#include <filesystem>
#include <vector>

#include "eit/recon/mesh.hpp"

namespace eit::recon {

Mesh load_mesh_csv_folder(const std::filesystem::path& folder);

// pyEIT's grounded node: pyeit_ref_node() in mesh_boundary.hpp.

}  // namespace eit::recon
