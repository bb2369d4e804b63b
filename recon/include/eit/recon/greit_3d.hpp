#pragma once
// GREIT on a voxel grid for 3-D (tetrahedral) models: H = D Yᵀ (Y Yᵀ + λ diag(Y Yᵀ)^p)⁻¹, the
// form and code the 2-D builder shares (greit_shared.hpp), trained one of two ways:
//
// train = spheres (default), as EIDORS' mk_GREIT_model trains its 3-D (vox_GREIT) models:
//   targets  n_targets small spheres of radius target_size · L (L = largest extent of the mesh's
//            bounding box), centres on a Halton sequence (bases 2, 3, 5) over the bounding box,
//            kept when inside the mesh: spread through the volume, deterministic;
//   X        (n_elems × n_targets) each sphere's conductivity change (contrast 1) per element,
//            by quadrature: a fixed lattice of points in the sphere, located in the tetrahedra,
//            each carrying V_sphere / n_points of volume × contrast, divided by V_element;
//   Y        = J X, the linearised measurements (J = −∂v/∂σ, pyEIT's sign, as every builder);
//   D        (n_voxels × n_targets) desired images: the 2-D sigmoid of the distance from voxel
//            centre to target centre (ratio, s; d_max = the largest target–voxel distance),
//            scaled so that Σ_voxels D · V_voxel = V_sphere (the image keeps the target's
//            volume × contrast); masked voxels 0.
// train = elements: pyEIT's 2-D "dist" GREIT with voxels for pixels: one unit target per
//   element (X = I, Y = J), D = Wᵀ (sigmoid of centroid–voxel distances, each voxel's weights
//   normalised to sum 1; d_max = the largest centroid–voxel distance); masked rows zeroed. On an
//   extruded 2-D model its planes are the 2-D GREIT's images.
//
// The output geometry is the voxel grid (voxel_grid.hpp: box over the mesh, mask = centre outside
// every tetrahedron), so the model streams as a --voxels model does.
// Set-up only: allocates, no state, throws std::invalid_argument naming the option.
#include <string_view>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/reconstruction_matrix.hpp"
#include "eit/recon/voxel_grid.hpp"

namespace eit::recon {

struct Greit3dOptions {
  enum class Train { kSpheres, kElements };
  Train train = Train::kSpheres;
  VoxelGridOptions grid{32, 32, 4, 1};  // samples unused: the mask is the voxel centres'
  int n_targets = 1000;       // training spheres (train = spheres; EIDORS uses 500 – 2000 in 3-D)
  double target_size = 0.05;  // sphere radius as a fraction of the bounding box's largest extent
  double ratio = 0.1;         // desired-image (PSF) radius, as 2-D GREIT: ratio · d_max
  double s = 20.0;            // its sigmoid slope
  double lambda = 1e-2;       // regularisation weight
  double p = 0.5;             // noise weighting Σ = diag(Y Yᵀ)^p
  bool jac_normalized = false;
  bool normalize = false;
};

// Training spheres: centres (n × 3), radius, and X (n_elems × n) as above.
struct GreitTargets {
  Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor> centres;
  double radius = 0;
  Eigen::SparseMatrix<double> X;
};

// Throws unless the mesh is tetrahedral and n ≥ 1, 0 < size < 0.5.
GreitTargets greit_training_targets(const Mesh& mesh, const Eigen::VectorXd& element_volumes, int n,
                                    double size);

// Conductivity change per element of one sphere (contrast 1, the same quadrature as X).
Eigen::VectorXd sphere_contrast(const Mesh& mesh, const Eigen::VectorXd& element_volumes,
                                const Eigen::Vector3d& centre, double radius);

// "spheres" | "elements"; throws std::invalid_argument naming the choices.
Greit3dOptions::Train parse_greit_train(std::string_view name);

ReconstructionMatrix build_greit_3d(ForwardModel& forward, const Greit3dOptions& options = {});
// With Jᵀ already computed (n_elems × n_meas, at conductivity 1, normalised as
// options.jac_normalized says), as model build does for JAC: the Jacobian is not recomputed.
ReconstructionMatrix build_greit_3d(ForwardModel& forward, const Eigen::MatrixXd& jt,
                                    const Greit3dOptions& options);

}  // namespace eit::recon
