#pragma once
// `--mesh` argument of `eitstream model build|import`: where the mesh comes from.
//   circle[:R]        Gmsh unit circle (or radius R); the default one (R 1, h0 0.1, 16 point
//                     electrodes) comes stored in the binary (default_circle_mesh.hpp), no Gmsh
//                     load; EIT_MESH_NO_EMBEDDED=1 in the environment makes Gmsh generate it
//   ellipse:A,B       Gmsh ellipse with semi-axes A (x) and B (y)
//   polygon:FILE      Gmsh mesh of the outline in FILE (one "x,y" or "x y" point per line, #
//   comments) csv:DIR           pyEIT-style folder (nodes.csv, elements.csv, el_pos.csv) msh:FILE
//   Gmsh .msh 2.2/4.1 (electrodes from physical groups, else N at pyEIT angles)
// Throws std::invalid_argument naming the argument and what was expected.
#include <string>

#include "eit/recon/mesh.hpp"

namespace eit::cli {

struct MeshSourceOptions {
  std::string spec = "circle";
  int n_electrodes = 16;
  double h0 = 0.1;
  double electrode_width = 0.0;  // > 0: generated meshes get electrode patches of this width
};

recon::Mesh load_mesh_source(const MeshSourceOptions& options);

}  // namespace eit::cli
