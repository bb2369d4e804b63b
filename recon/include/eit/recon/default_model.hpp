#pragma once
// The built-in model `eitstream run` uses when given none: a unit circle meshed by Gmsh
// (h0 = 0.1, about 420 nodes / 780 triangles; the mesh is stored in the binary,
// default_circle_mesh.hpp, so no build needs or loads Gmsh for it), 16 electrodes at pyEIT's
// positions, the adjacent protocol (208 measurements, order 'std'), point electrodes, pyEIT's GREIT
// on a 32 × 32 grid with its setup() defaults (p = 0.2, λ = 0.01, s = 20, ratio = 0.1), normalize
// off, v_ref = the homogeneous forward solution. H is 1024 × 208; model.id is set. Builds in a few
// tens of ms. Allocates; no state; throws only on internal failure.
#include "eit/recon/model.hpp"

namespace eit::recon {

Model default_model();

}  // namespace eit::recon
