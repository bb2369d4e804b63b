#include "eit/recon/greit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "greit_shared.hpp"
#include "model_assembly.hpp"

namespace eit::recon {
namespace {

double cross(double ax, double ay, double bx, double by) { return ax * by - ay * bx; }

}  // namespace

GridGeometry greit_grid(const Mesh& mesh, int n) {
  if (n < 2 || n > 4096)
    throw std::invalid_argument(fmt::format("greit: grid size n = {}, expected 2..4096", n));
  GridGeometry grid;
  grid.nx = grid.ny = n;
  const double x_min = mesh.nodes.col(0).minCoeff(), x_max = mesh.nodes.col(0).maxCoeff();
  const double y_min = mesh.nodes.col(1).minCoeff(), y_max = mesh.nodes.col(1).maxCoeff();
  grid.x0 = x_min;
  grid.y0 = y_min;
  grid.dx = (x_max - x_min) / n;  // numpy linspace(endpoint=False): x_i = i·step + start
  grid.dy = (y_max - y_min) / n;
  grid.mask.assign(static_cast<size_t>(n) * n, 1);

  // A point is inside a triangle when |a0| + |a1| + |a2| ≤ 1.01 |a| (doubled sub-areas vs the
  // doubled area). The region passing that test lies within the triangle's bounding box grown by
  // 1% of its width + height, so only grid points in that box are tested.
  for (int e = 0; e < mesh.n_elems(); ++e) {
    double px[3], py[3];
    for (int k = 0; k < 3; ++k) {
      px[k] = mesh.nodes(mesh.elements(e, k), 0);
      py[k] = mesh.nodes(mesh.elements(e, k), 1);
    }
    const double a_tot =
        std::abs(cross(px[1] - px[0], py[1] - py[0], px[2] - px[1], py[2] - py[1]));
    const double bx0 = std::min({px[0], px[1], px[2]}), bx1 = std::max({px[0], px[1], px[2]});
    const double by0 = std::min({py[0], py[1], py[2]}), by1 = std::max({py[0], py[1], py[2]});
    const double grow = 0.01 * ((bx1 - bx0) + (by1 - by0)) + 1e-12;
    const int c0 = std::max(0, static_cast<int>(std::floor((bx0 - grow - x_min) / grid.dx)));
    const int c1 = std::min(n - 1, static_cast<int>(std::ceil((bx1 + grow - x_min) / grid.dx)));
    const int r0 = std::max(0, static_cast<int>(std::floor((by0 - grow - y_min) / grid.dy)));
    const int r1 = std::min(n - 1, static_cast<int>(std::ceil((by1 + grow - y_min) / grid.dy)));
    for (int r = r0; r <= r1; ++r) {
      const double y = r * grid.dy + y_min;
      for (int c = c0; c <= c1; ++c) {
        uint8_t& outside = grid.mask[static_cast<size_t>(r) * n + c];
        if (!outside) continue;
        const double x = c * grid.dx + x_min;
        const double tx[3] = {px[0] - x, px[1] - x, px[2] - x};
        const double ty[3] = {py[0] - y, py[1] - y, py[2] - y};
        const double sum = std::abs(cross(tx[0], ty[0], tx[1], ty[1])) +
                           std::abs(cross(tx[1], ty[1], tx[2], ty[2])) +
                           std::abs(cross(tx[2], ty[2], tx[0], ty[0]));
        if (sum <= 1.01 * a_tot) outside = 0;
      }
    }
  }
  return grid;
}

namespace {

// The grid points (row-major) as coordinates, n² × 2.
Eigen::ArrayXXd grid_points(const GridGeometry& grid) {
  Eigen::ArrayXXd g(grid.nx * grid.ny, 2);
  for (int r = 0; r < grid.ny; ++r)
    for (int c = 0; c < grid.nx; ++c) {
      g(r * grid.nx + c, 0) = c * grid.dx + grid.x0;
      g(r * grid.nx + c, 1) = r * grid.dy + grid.y0;
    }
  return g;
}

}  // namespace

Eigen::MatrixXd greit_weights(const Mesh& mesh, const GridGeometry& grid, double ratio, double s) {
  const Eigen::ArrayXXd c = detail::element_centroids(mesh), g = grid_points(grid);
  Eigen::MatrixXd out(mesh.n_elems(), g.rows());
  detail::greit_weight_block(c, g, detail::greit_d_max(c, g), 0, ratio, s, out);
  out.array().rowwise() /= out.colwise().sum().array();
  return out;
}

ReconstructionMatrix build_greit(ForwardModel& forward, const GreitOptions& o) {
  if (!(o.lambda > 0) || !std::isfinite(o.lambda))
    throw std::invalid_argument(fmt::format("greit: lambda {} must be > 0", o.lambda));
  if (!(o.p >= 0) || !std::isfinite(o.p))
    throw std::invalid_argument(fmt::format("greit: p {} must be ≥ 0", o.p));
  if (!(o.s > 0) || !(o.ratio > 0) || !std::isfinite(o.s) || !std::isfinite(o.ratio))
    throw std::invalid_argument(
        fmt::format("greit: s = {} and ratio = {} must both be > 0", o.s, o.ratio));
  const Mesh& mesh = forward.mesh();
  if (mesh.dim() != 2)
    throw std::invalid_argument(fmt::format(
        "greit: the mesh has {} tetrahedra; GREIT's pixel grid is 2-D, use jac or bp for a 3-D "
        "mesh",
        mesh.n_elems()));
  GridGeometry grid = greit_grid(mesh, o.n);
  const Eigen::MatrixXd jt = forward.jacobian_transposed(o.perm, o.jac_normalized);

  // X = Jᵀ (JJᵀ + λ diag(JJᵀ)^p)⁻¹ (n_elems × n_meas): the training solve with one unit target
  // per element (Y = J); H = Wᵀ X.
  const Eigen::MatrixXd X = detail::greit_training_solve(jt, o.lambda, o.p);
  ReconstructionMatrix out;
  out.H = detail::greit_weighted_images(detail::element_centroids(mesh), grid_points(grid), X,
                                        o.ratio, o.s);

  const std::string params = fmt::format(
      R"({{"n": {}, "s": {}, "ratio": {}, "p": {}, "lambda": {}, "jac_normalized": {}, )"
      R"("normalize": {}, {}}})",
      o.n, detail::json_number(o.s), detail::json_number(o.ratio), detail::json_number(o.p),
      detail::json_number(o.lambda), o.jac_normalized, o.normalize,
      detail::forward_json(forward.options()));
  out.model = detail::make_model("greit", params, out.H, forward.solve(o.perm), o.normalize,
                                 forward.protocol(), std::move(grid));
  return out;
}

}  // namespace eit::recon
