#pragma once
// The built-in model `eitstream run` uses when given none: a unit circle meshed by Gmsh
// (h0 = 0.1, about 420 nodes / 780 triangles), 16 electrodes at pyEIT's positions, the adjacent
// protocol (208 measurements, order 'std'), point electrodes, pyEIT's GREIT on a 32 × 32 grid
// with its setup() defaults (p = 0.2, λ = 0.01, s = 20, ratio = 0.1), normalize off, v_ref = the
// homogeneous forward solution. H is 1024 × 208; model.id is set. Builds in a few tens of ms.
//
// Without Gmsh (EIT_HAVE_GMSH undefined) the mesh is the structured ring mesh of
// layered_circle_mesh (16 electrodes, 8 rings: 1,024 triangles) instead; the parameters record
// which mesh was used. Allocates; no state; throws only on internal failure.
#include "eit/recon/model.hpp"

namespace eit::recon {

Model default_model();

}  // namespace eit::recon
