// 3-D GREIT on a voxel grid (greit_3d.hpp): training spheres → Y = J X, desired images D,
// H = D Yᵀ (Y Yᵀ + λ Σ)⁻¹ through the solve the 2-D builder uses.
#include "eit/recon/greit_3d.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>

#include <fmt/format.h>

#include "greit_shared.hpp"
#include "model_assembly.hpp"

namespace eit::recon {
namespace {

void check_options(const Greit3dOptions& o) {
  if (!(o.lambda > 0) || !std::isfinite(o.lambda))
    throw std::invalid_argument(fmt::format("greit 3-D: lambda {} must be > 0", o.lambda));
  if (!(o.p >= 0) || !std::isfinite(o.p))
    throw std::invalid_argument(fmt::format("greit 3-D: p {} must be ≥ 0", o.p));
  if (!(o.s > 0) || !(o.ratio > 0) || !std::isfinite(o.s) || !std::isfinite(o.ratio))
    throw std::invalid_argument(
        fmt::format("greit 3-D: s = {} and ratio = {} must both be > 0", o.s, o.ratio));
}

// Voxel centres (n_voxels × 3) in the grid's order.
Eigen::ArrayXXd voxel_centres(const GridGeometry& g) {
  Eigen::ArrayXXd c(static_cast<Eigen::Index>(g.n_pixels()), 3);
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const Eigen::Index v = (static_cast<Eigen::Index>(z) * g.ny + y) * g.nx + x;
        c(v, 0) = g.x0 + x * g.dx;
        c(v, 1) = g.y0 + y * g.dy;
        c(v, 2) = g.z0 + z * g.dz;
      }
  return c;
}

// D (n_voxels × n_targets): sigmoid of the voxel–target distance on unmasked voxels, each column
// scaled so that its sum × the voxel volume is the sphere's volume (contrast 1).
Eigen::MatrixXd desired_images(const GridGeometry& g, const Eigen::ArrayXXd& voxels,
                               const GreitTargets& t, const Greit3dOptions& o) {
  const Eigen::ArrayXXd centres = t.centres;
  const double d_max = detail::greit_d_max(centres, voxels);
  Eigen::ArrayXd inside(voxels.rows());
  for (Eigen::Index v = 0; v < voxels.rows(); ++v)
    inside(v) = g.mask[static_cast<size_t>(v)] ? 0.0 : 1.0;
  const double v_sphere = 4.0 / 3.0 * std::numbers::pi * std::pow(t.radius, 3);
  const double v_voxel = g.dx * g.dy * g.dz;
  Eigen::MatrixXd d(voxels.rows(), centres.rows());
  for (Eigen::Index k = 0; k < centres.rows(); ++k) {
    const Eigen::ArrayXd dist =
        ((voxels.col(0) - centres(k, 0)).square() + (voxels.col(1) - centres(k, 1)).square() +
         (voxels.col(2) - centres(k, 2)).square())
            .sqrt();
    const Eigen::ArrayXd col = detail::greit_sigmoid(dist, d_max, o.ratio, o.s) * inside;
    d.col(k) = (col * (v_sphere / (col.sum() * v_voxel))).matrix();
  }
  return d;
}

}  // namespace

Greit3dOptions::Train parse_greit_train(std::string_view name) {
  if (name == "spheres") return Greit3dOptions::Train::kSpheres;
  if (name == "elements") return Greit3dOptions::Train::kElements;
  throw std::invalid_argument(
      fmt::format("greit 3-D: training '{}', expected spheres or elements", name));
}

ReconstructionMatrix build_greit_3d(ForwardModel& forward, const Greit3dOptions& o) {
  check_options(o);
  return build_greit_3d(forward, forward.jacobian_transposed({}, o.jac_normalized), o);
}

ReconstructionMatrix build_greit_3d(ForwardModel& forward, const Eigen::MatrixXd& jt,
                                    const Greit3dOptions& o) {
  check_options(o);
  const Mesh& mesh = forward.mesh();
  if (mesh.dim() != 3)
    throw std::invalid_argument(fmt::format(
        "greit 3-D: the mesh has {} triangles; the voxel GREIT needs tetrahedra (2-D meshes use "
        "the pixel GREIT)",
        mesh.n_elems()));
  MeshGeometry shape;
  shape.nodes = mesh.nodes;
  shape.elements = mesh.elements;
  VoxelGridOptions grid_options = o.grid;
  grid_options.samples = 1;  // only the mask (voxel centres) is used, not the map
  GridGeometry grid = make_voxel_map(shape, grid_options).grid;

  const auto n_meas = static_cast<Eigen::Index>(forward.protocol().n_meas());
  if (jt.rows() != mesh.n_elems() || jt.cols() != n_meas)
    throw std::invalid_argument(fmt::format("greit 3-D: Jᵀ is {} × {}, expected {} × {}", jt.rows(),
                                            jt.cols(), mesh.n_elems(), n_meas));
  const Eigen::ArrayXXd voxels = voxel_centres(grid);
  ReconstructionMatrix out;
  if (o.train == Greit3dOptions::Train::kElements) {
    const Eigen::MatrixXd x = detail::greit_training_solve(jt, o.lambda, o.p);
    out.H = detail::greit_weighted_images(detail::element_centroids(mesh), voxels, x, o.ratio, o.s);
    for (Eigen::Index v = 0; v < out.H.rows(); ++v)
      if (grid.mask[static_cast<size_t>(v)]) out.H.row(v).setZero();
  } else {
    const GreitTargets targets =
        greit_training_targets(mesh, forward.element_areas(), o.n_targets, o.target_size);
    const Eigen::MatrixXd yt = targets.X.transpose() * jt;  // Yᵀ, n_targets × n_meas
    const Eigen::MatrixXd a = detail::greit_training_solve(yt, o.lambda, o.p);
    out.H.noalias() = desired_images(grid, voxels, targets, o) * a;
  }
  const std::string params = fmt::format(
      R"({{"voxels": {{"nx": {}, "ny": {}, "nz": {}}}, "train": "{}", "targets": {}, "target_size": {}, )"
      R"("s": {}, "ratio": {}, "p": {}, "lambda": {}, "jac_normalized": {}, "normalize": {}, {}}})",
      grid.nx, grid.ny, grid.nz,
      o.train == Greit3dOptions::Train::kElements ? "elements" : "spheres", o.n_targets,
      detail::json_number(o.target_size), detail::json_number(o.s), detail::json_number(o.ratio),
      detail::json_number(o.p), detail::json_number(o.lambda), o.jac_normalized, o.normalize,
      detail::forward_json(forward.options()));
  out.model = detail::make_model("greit", params, out.H, forward.solve(), o.normalize,
                                 forward.protocol(), std::move(grid));
  return out;
}

}  // namespace eit::recon
