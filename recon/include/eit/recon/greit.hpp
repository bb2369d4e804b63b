#pragma once
// pyEIT's GREIT ("dist" method, greit.GREIT.setup, commit 3ed2fca):
//   grid  x = linspace(min x, max x, n, endpoint=False), same for y (lower-left pixel corners),
//         image row = y; mask = grid point in no triangle (|sub-areas| sum ≤ 1.01·area test),
//   W     (n_elems × n²): D = centroid–grid distance, D' = 5 D / max D,
//         w = 1 / (1 + exp(s (D' − 5 ratio))), each column normalised to sum 1,
//   H     = Wᵀ Jᵀ (JJᵀ + λ diag(JJᵀ)^p)⁻¹   (n² × n_meas; the mask is not applied to H).
// The solve and the weights are shared with the 3-D voxel GREIT (greit_shared.hpp, greit_3d.hpp).
// Allocates; no state; throws std::invalid_argument for bad options.
#include <cstdint>
#include <vector>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/reconstruction_matrix.hpp"

namespace eit::recon {

struct GreitOptions {
  int n = 32;
  double s = 20.0;
  double ratio = 0.1;
  double p = 0.2;
  double lambda = 1e-2;
  bool jac_normalized = false;
  bool normalize = false;
  Eigen::VectorXd perm;  // empty = 1 everywhere
};

// pyEIT's rasterize: grid origin, steps and mask (1 = outside every triangle).
GridGeometry greit_grid(const Mesh& mesh, int n);

// Sigmoid weights W (n_elems × nx·ny) of the grid's points, row-major grid order.
Eigen::MatrixXd greit_weights(const Mesh& mesh, const GridGeometry& grid, double ratio, double s);

ReconstructionMatrix build_greit(ForwardModel& forward, const GreitOptions& options = {});

}  // namespace eit::recon
