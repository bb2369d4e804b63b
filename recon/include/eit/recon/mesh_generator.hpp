#pragma once
// Triangular meshes of a body outline (circle, ellipse, polygon) with N electrodes on boundary
// nodes, made by Gmsh (its C++ API, Frontal-Delaunay, one thread, fixed options: the same inputs
// give the same mesh).
//
// Electrodes: equal arc length clockwise from 9 o'clock (outline.hpp); on the circle exactly
// pyEIT's (−cos θk, sin θk). Each electrode point is a vertex of the boundary geometry, so it is
// a mesh node, with its exact coordinates. With electrode_width > 0 the electrode's two edges
// (±width/2 in arc length) are boundary vertices too, and Mesh::electrode_patches lists the
// boundary nodes between them (complete electrode model). Node order: electrode nodes first (node k
// = electrode k, as in pyEIT), then the others in Gmsh's order; ref_node = N (pyEIT's choice).
// Triangles counter-clockwise.
//
// Threads: Gmsh is a process-wide singleton; calls are serialised by an internal mutex. Gmsh is
// initialised on first use (General.Terminal = 0: nothing printed) and finalised at exit.
// Loading: Gmsh lives in the module libeit_gmsh.so, dlopen()ed on the first call of either
// function below (src/mesh_generator_loader.cpp says where it is looked for), so processes that
// never mesh never load Gmsh/OpenCASCADE/FLTK. Built without Gmsh (EIT_HAVE_GMSH undefined), or
// with the module missing, generate_mesh throws std::runtime_error saying why.
#include <filesystem>

#include "eit/recon/mesh.hpp"
#include "eit/recon/outline.hpp"

namespace eit::recon {

struct MeshOptions {
  Outline outline = CircleOutline{};
  int n_electrodes = 16;
  double h0 = 0.1;               // target edge length (Gmsh mesh size)
  double electrode_width = 0.0;  // arc length of each electrode; 0 = point electrodes
  // Optionally also write Gmsh's own .msh file (ASCII; format 2.2 or 4.1) with physical groups
  // "body" (the surface) and "electrode1".."electrodeN" (points), readable by read_msh.
  std::filesystem::path save_msh;
  double save_msh_version = 4.1;
};

// Throws std::invalid_argument for bad options (naming the option, value and range) and
// std::runtime_error when Gmsh fails or is not built in.
Mesh generate_mesh(const MeshOptions& options);

// True when this build has Gmsh and its module loads (generate_mesh works). Loads the module.
bool mesh_generator_available() noexcept;

}  // namespace eit::recon
