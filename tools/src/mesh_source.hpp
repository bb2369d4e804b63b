#pragma once
// `--mesh` argument of `eitstream model build|import`: where the mesh comes from.
//   circle[:R]        Gmsh unit circle (or radius R); the default one (R 1, h0 0.1, 16 point
//                     electrodes) comes stored in the binary (default_circle_mesh.hpp), no Gmsh
//                     load; EIT_MESH_NO_EMBEDDED=1 in the environment makes Gmsh generate it
//   ellipse:A,B       Gmsh ellipse with semi-axes A (x) and B (y)
//   polygon:FILE      Gmsh mesh of the outline in FILE (one "x,y" or "x y" point per line, #
//   comments) csv:DIR           pyEIT-style folder (nodes.csv, elements.csv, el_pos.csv) msh:FILE
//   Gmsh .msh 2.2/4.1 (electrodes from physical groups, else N at pyEIT angles)
// With dim = 3 the outline (circle, ellipse, polygon) is extruded to `height` and meshed in
// tetrahedra by generate_mesh_3d (a circle gives a cylinder: a tank), electrodes in `rings` rings;
// csv:DIR and msh:FILE take whatever dimension the file has.
// Throws std::invalid_argument naming the argument and what was expected.
#include <string>
#include <vector>

#include "eit/recon/mesh.hpp"

namespace eit::cli {

struct MeshSourceOptions {
  std::string spec = "circle";
  int n_electrodes = 16;
  double h0 = 0.1;
  double electrode_width = 0.0;  // > 0: generated meshes get electrode patches of this width
  // 3-D generation (dim = 3): extrusion height, rings, ring heights (empty: equally spaced),
  // edge length at the electrodes (0: h0 / 3).
  int dim = 2;
  double height = 1.0;
  int rings = 1;
  std::vector<double> ring_z;
  double h_electrode = 0.0;
  // 3-D electrode patches when electrode_width > 0: "rect" (electrode_width along the outline ×
  // electrode_height along z) or "circle" (disc of diameter electrode_width).
  std::string electrode_shape = "rect";
  double electrode_height = 0.1;
  // 3-D generation: "delaunay" (Gmsh's 3-D Delaunay fills the volume) or "extruded" (the
  // cross-section's triangles extruded in layers; mesh_generator_3d.hpp, Mesh3dOptions::Mesher).
  std::string mesher = "delaunay";
};

recon::Mesh load_mesh_source(const MeshSourceOptions& options);

// Electrode rings of a mesh: 1 for 2-D; in 3-D the distinct electrode heights (within 1e-6 of the
// mesh's height range), which must hold equally many electrodes numbered ring by ring from the
// lowest (the generator's numbering), else std::invalid_argument naming the first electrode out of
// place.
int electrode_ring_count(const recon::Mesh& mesh);

}  // namespace eit::cli
