#pragma once
// A structured circle mesh that needs no Gmsh (small, fast meshes for tests and for builds
// without Gmsh; the built-in model uses the stored Gmsh mesh, default_circle_mesh.hpp).
// Allocates; no state.
#include "eit/recon/mesh.hpp"

namespace eit::recon {

// A deterministic structured mesh of the unit circle: ring i (i = 1..n_rings) at radius i/n_rings
// carries n_electrodes·i nodes at angles θ = 2πj/(n_electrodes·i), node position (−cos θ, sin θ)
// as pyEIT's electrodes, so electrode k is node 1 + n_electrodes·(n_rings−1)·n_rings/2 + k·n_rings
// of the outer ring; the centre is node 0. n_electrodes·n_rings² triangles, CCW.
Mesh layered_circle_mesh(int n_electrodes = 16, int n_rings = 8);

}  // namespace eit::recon
