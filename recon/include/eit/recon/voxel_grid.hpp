#pragma once
// Voxel output for 3-D models: a regular nx × ny × nz grid over the mesh's bounding box, so that
// grid consumers (the live view, recorders, Python) can show z-planes. The reconstruction matrix of
// a per-tetrahedron (or per-node) model is mapped once at set-up, H_vox = P · H, where P is sparse:
//
//   each voxel is sampled at S × S × S points (S = samples, at the centres of an S³ sub-grid);
//   a sample inside the mesh takes the value of the tetrahedron containing it (element output) or
//   the linear interpolation of its nodes (node output); the voxel's value is the mean over its
//   samples inside the mesh, i.e. a volume-weighted average of the tetrahedra it overlaps
//   (exact as S grows). S = 1 is "the tetrahedron containing the voxel centre".
//
// Why averaging by default (S = 3): a 32 × 32 × 4 voxel of a chest-sized model spans many
// tetrahedra, and one containing tetrahedron would alias (a voxel takes whatever small element its
// centre hits); the average is what a plane display should show, as EIDORS' coarse-to-fine maps do.
// mask[i] = 1 (outside) when the voxel centre is outside every tetrahedron, as the 2-D GREIT grid
// masks pixels whose centre lies outside the body; masked voxels have zero rows in H.
//
// Set-up only: allocates and throws std::invalid_argument naming the option.
#include <string_view>
#include <vector>

#include <Eigen/SparseCore>

#include "eit/recon/mesh.hpp"
#include "eit/recon/model.hpp"
#include "eit/recon/reconstruction_matrix.hpp"

namespace eit::recon {

struct VoxelGridOptions {
  int nx = 32, ny = 32, nz = 4;
  int samples = 3;  // S per axis and voxel, 1..8
};

// "NXxNYxNZ" (e.g. "32x32x4"), each 1..1024.
VoxelGridOptions parse_voxel_spec(std::string_view text);

// The grid over the bounding box of `nodes` (n × 3): voxel edges on the box, mask left empty.
GridGeometry voxel_grid_over(const NodeMatrix& nodes, const VoxelGridOptions& options);

// The tetrahedron containing each point (−1 outside all), and its barycentric weights (4 per
// point, node order of the element). points: m × 3. A point on a shared face goes to one of the
// tetrahedra it touches.
struct PointLocation {
  std::vector<int> element;
  std::vector<double> weights;
};
PointLocation locate_points(
    const NodeMatrix& nodes, const ElementMatrix& tets,
    const Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor>& points);

// P (n_voxels × n_out of the mesh: elements or nodes) and the grid with its mask.
struct VoxelMap {
  GridGeometry grid;
  Eigen::SparseMatrix<double, Eigen::RowMajor> P;
};
VoxelMap make_voxel_map(const MeshGeometry& mesh, const VoxelGridOptions& options);

// Replaces a 3-D mesh model's output by the voxel grid: rm.H and rm.model.H become P · H, the
// geometry the grid, and `"voxels": {...}` is added to the parameters. Throws unless the model's
// geometry is a tetrahedral mesh.
void map_to_voxels(ReconstructionMatrix& rm, const VoxelGridOptions& options);

}  // namespace eit::recon
