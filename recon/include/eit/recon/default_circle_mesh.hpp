#pragma once
// default_circle_mesh(): the mesh our Gmsh generator makes for MeshOptions{} (unit circle, h0 0.1,
// 16 point electrodes), stored in the binary (src/default_circle_mesh_data.cpp, written by
// scripts/embed_default_mesh.py). tests/recon/test_default_circle_mesh.cpp checks it node for
// node against the generator wherever Gmsh is available. The built-in model and `eitstream model
// build` with the default mesh use it, so neither loads Gmsh (~0.5 s of shared libraries).
// Allocates (the returned mesh); no state; any thread.
#include "eit/recon/mesh.hpp"
#include "eit/recon/mesh_generator.hpp"

namespace eit::recon {

Mesh default_circle_mesh();

// True when generate_mesh(options) would make exactly default_circle_mesh(): a circle of radius
// 1, 16 point electrodes, h0 0.1, and no .msh file asked for.
bool is_default_circle_mesh(const MeshOptions& options) noexcept;

}  // namespace eit::recon
