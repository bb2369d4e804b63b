#pragma once
// The built-in set-up of `eitstream run` with no arguments: a 16-electrode circle (Gmsh mesh),
// the adjacent protocol, and a reconstruction model for it. Also gives the synthetic phantom a
// mesh when the model's own geometry is a pixel grid.
#include "eit/recon/mesh.hpp"
#include "eit/recon/model.hpp"

namespace eit::cli {

// Unit circle, n electrodes, pyEIT-like mesh density. Throws when Gmsh is not built in.
recon::Mesh default_mesh(int n_electrodes = 16);

// The built-in model on default_mesh(): one-step Gauss-Newton (Tikhonov, λ = 0.01·mean diag
// JᵀJ) on the mesh elements, shown on a 32×32 pixel grid (1024×208, the shape of the GREIT
// default), v_ref = the homogeneous forward solution, id = content hash.
recon::Model default_model(const recon::Mesh& mesh);

// The mesh the synthetic phantom simulates on for `model`: the model's own mesh when its
// geometry is one (with electrodes), otherwise default_mesh() with the protocol's electrodes.
recon::Mesh phantom_mesh_for(const recon::Model& model);

}  // namespace eit::cli
