#include "eit/recon/greit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <Eigen/Cholesky>

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

// Element centroids and the grid points (row-major) as coordinates.
struct WeightInputs {
  Eigen::ArrayXd cx, cy, gx, gy;
  double d_max = 0;
};

WeightInputs weight_inputs(const Mesh& mesh, const GridGeometry& grid) {
  WeightInputs w;
  const int m = mesh.n_elems();
  w.cx.resize(m);
  w.cy.resize(m);
  for (int e = 0; e < m; ++e) {
    w.cx(e) = (mesh.nodes(mesh.elements(e, 0), 0) + mesh.nodes(mesh.elements(e, 1), 0) +
               mesh.nodes(mesh.elements(e, 2), 0)) /
              3.0;
    w.cy(e) = (mesh.nodes(mesh.elements(e, 0), 1) + mesh.nodes(mesh.elements(e, 1), 1) +
               mesh.nodes(mesh.elements(e, 2), 1)) /
              3.0;
  }
  const int n_grid = grid.nx * grid.ny;
  w.gx.resize(n_grid);
  w.gy.resize(n_grid);
  for (int r = 0; r < grid.ny; ++r)
    for (int c = 0; c < grid.nx; ++c) {
      w.gx(r * grid.nx + c) = c * grid.dx + grid.x0;
      w.gy(r * grid.nx + c) = r * grid.dy + grid.y0;
    }
  // The largest centroid–grid distance is attained at a corner of the grid's bounding box.
  const double gx0 = w.gx.minCoeff(), gx1 = w.gx.maxCoeff();
  const double gy0 = w.gy.minCoeff(), gy1 = w.gy.maxCoeff();
  for (double x : {gx0, gx1})
    for (double y : {gy0, gy1})
      w.d_max = std::max(w.d_max, ((w.cx - x).square() + (w.cy - y).square()).sqrt().maxCoeff());
  return w;
}

// Unnormalised sigmoid weights of elements [e0, e0 + block.rows()) (rows) for every grid point
// (columns), evaluated in place.
void weight_block(const WeightInputs& w, Eigen::Index e0, double ratio, double s,
                  Eigen::Ref<Eigen::MatrixXd> block) {
  const double scale = 5.0 / w.d_max, r0 = 5.0 * ratio;
  const auto cx = w.cx.segment(e0, block.rows()), cy = w.cy.segment(e0, block.rows());
  for (Eigen::Index g = 0; g < block.cols(); ++g) {
    const double x = w.gx(g), y = w.gy(g);
    block.col(g).array() =
        1.0 / (1.0 + (s * (((cx - x).square() + (cy - y).square()).sqrt() * scale - r0)).exp());
  }
}

}  // namespace

Eigen::MatrixXd greit_weights(const Mesh& mesh, const GridGeometry& grid, double ratio, double s) {
  const WeightInputs w = weight_inputs(mesh, grid);
  Eigen::MatrixXd out(mesh.n_elems(), grid.nx * grid.ny);
  weight_block(w, 0, ratio, s, out);
  out.array().rowwise() /= out.colwise().sum().array();
  return out;
}

ReconstructionMatrix build_greit(ForwardModel& forward, const GreitOptions& o) {
  if (!(o.lambda > 0) || !std::isfinite(o.lambda))
    throw std::invalid_argument(fmt::format("greit: lambda {} must be > 0", o.lambda));
  if (!(o.s > 0) || !(o.ratio > 0))
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

  // X = Jᵀ (JJᵀ + λ diag(JJᵀ)^p)⁻¹  (n_elems × n_meas)
  const Eigen::Index n_meas = jt.cols();
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(n_meas, n_meas);
  m.selfadjointView<Eigen::Lower>().rankUpdate(jt.transpose());
  m.triangularView<Eigen::StrictlyUpper>() = m.transpose();
  m.diagonal() += o.lambda * m.diagonal().array().pow(o.p).matrix();
  const Eigen::LLT<Eigen::MatrixXd> llt(m);
  if (llt.info() != Eigen::Success)
    throw std::runtime_error("greit: JJᵀ + λ diag(JJᵀ)^p is not positive definite");
  Eigen::MatrixXd X(jt.rows(), n_meas);
  X.noalias() = jt * llt.solve(Eigen::MatrixXd::Identity(n_meas, n_meas));

  // H = Wᵀ X, built in blocks of grid points so W (n_elems × n²) is never held whole.
  const WeightInputs w = weight_inputs(mesh, grid);
  // H = Wᵀ X with W's columns normalised to sum 1: accumulate the unnormalised product and the
  // column sums over blocks of elements, then scale each row of H once. W (n_elems × n²) is
  // never held whole and X is read (packed) once.
  const int n_grid = grid.nx * grid.ny;
  ReconstructionMatrix out;
  out.H = Eigen::MatrixXd::Zero(n_grid, n_meas);
  Eigen::VectorXd column_sums = Eigen::VectorXd::Zero(n_grid);
  constexpr Eigen::Index kBlock = 1024;
  const Eigen::Index n_e = mesh.n_elems();
  Eigen::MatrixXd block(std::min(kBlock, n_e), n_grid);
  for (Eigen::Index e0 = 0; e0 < n_e; e0 += kBlock) {
    const Eigen::Index count = std::min(kBlock, n_e - e0);
    auto w_block = block.topRows(count);
    weight_block(w, e0, o.ratio, o.s, w_block);
    column_sums += w_block.colwise().sum().transpose();
    out.H.noalias() += w_block.transpose() * X.middleRows(e0, count);
  }
  out.H = column_sums.cwiseInverse().asDiagonal() * out.H;

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
