#pragma once
// The mesh the synthetic phantom of `eitstream run` simulates on.
#include "eit/recon/mesh.hpp"
#include "eit/recon/model.hpp"

namespace eit::cli {

// The mesh of recon::default_model() for n electrodes: the Gmsh unit circle (h0 = 0.1), or the
// layered ring mesh when this build has no Gmsh.
recon::Mesh default_mesh(int n_electrodes = 16);

// The mesh the synthetic phantom simulates on for `model`: the model's own mesh when its
// geometry is one (with electrodes), otherwise default_mesh() with the protocol's electrodes
// (a GREIT model's geometry is a pixel grid).
recon::Mesh phantom_mesh_for(const recon::Model& model);

}  // namespace eit::cli
