// Training spheres of the 3-D GREIT (greit_3d.hpp): Halton centres inside the mesh and each
// sphere's conductivity change per element by lattice quadrature.
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/greit_3d.hpp"

namespace eit::recon {
namespace {

using Points = Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor>;

// Quadrature points of the unit ball: the centres of a 6 × 6 × 6 lattice over [−1, 1]³ that lie
// inside it (136 points; none at the centre, symmetric under every axis flip).
const Points& unit_ball_points() {
  static const Points points = [] {
    constexpr int m = 6;
    std::vector<Eigen::RowVector3d> in;
    for (int a = 0; a < m; ++a)
      for (int b = 0; b < m; ++b)
        for (int c = 0; c < m; ++c) {
          const Eigen::RowVector3d q((2 * c + 1.0) / m - 1, (2 * b + 1.0) / m - 1,
                                     (2 * a + 1.0) / m - 1);
          if (q.squaredNorm() <= 1.0) in.push_back(q);
        }
    Points p(static_cast<Eigen::Index>(in.size()), 3);
    for (size_t i = 0; i < in.size(); ++i) p.row(static_cast<Eigen::Index>(i)) = in[i];
    return p;
  }();
  return points;
}

// The i-th element of van der Corput's sequence in base b (Halton's coordinates).
double radical_inverse(long i, int base) {
  double f = 1.0, r = 0.0;
  for (; i > 0; i /= base) {
    f /= base;
    r += f * static_cast<double>(i % base);
  }
  return r;
}

void require_tetrahedra(const Mesh& mesh, const Eigen::VectorXd& volumes) {
  if (mesh.dim() != 3)
    throw std::invalid_argument(fmt::format(
        "greit 3-D: the mesh has {} triangles; training spheres need a tetrahedral mesh",
        mesh.n_elems()));
  if (volumes.size() != mesh.n_elems())
    throw std::invalid_argument(fmt::format("greit 3-D: {} element volumes for {} tetrahedra",
                                            volumes.size(), mesh.n_elems()));
}

// Adds each sphere's quadrature (points of sphere t = rows t·K .. t·K + K − 1) to triplets.
void add_quadrature(const Mesh& mesh, const Eigen::VectorXd& volumes, const Points& centres,
                    double radius, std::vector<Eigen::Triplet<double>>& out) {
  const Points& ball = unit_ball_points();
  const Eigen::Index k = ball.rows();
  Points p(centres.rows() * k, 3);
  for (Eigen::Index t = 0; t < centres.rows(); ++t)
    p.middleRows(t * k, k) = (radius * ball).rowwise() + centres.row(t);
  const PointLocation at = locate_points(mesh.nodes, mesh.elements, p);
  const double weight = 4.0 / 3.0 * std::numbers::pi * radius * radius * radius / k;
  for (Eigen::Index i = 0; i < p.rows(); ++i) {
    const int e = at.element[static_cast<size_t>(i)];
    if (e >= 0) out.emplace_back(e, static_cast<int>(i / k), weight / volumes(e));
  }
}

}  // namespace

Eigen::VectorXd sphere_contrast(const Mesh& mesh, const Eigen::VectorXd& volumes,
                                const Eigen::Vector3d& centre, double radius) {
  require_tetrahedra(mesh, volumes);
  std::vector<Eigen::Triplet<double>> entries;
  add_quadrature(mesh, volumes, centre.transpose(), radius, entries);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(mesh.n_elems());
  for (const auto& t : entries) x(t.row()) += t.value();
  return x;
}

GreitTargets greit_training_targets(const Mesh& mesh, const Eigen::VectorXd& volumes, int n,
                                    double size) {
  require_tetrahedra(mesh, volumes);
  if (n < 1 || n > 1'000'000)
    throw std::invalid_argument(
        fmt::format("greit 3-D: {} training targets, expected 1..1000000", n));
  if (!(size > 0 && size < 0.5))
    throw std::invalid_argument(fmt::format(
        "greit 3-D: target size {}, expected a fraction of the body's extent in (0, 0.5)", size));
  const Eigen::RowVector3d lo = mesh.nodes.colwise().minCoeff(),
                           span = mesh.nodes.colwise().maxCoeff() - lo;
  GreitTargets out;
  out.radius = size * span.maxCoeff();
  out.centres.resize(n, 3);
  // Halton points over the box, in batches, kept when inside the mesh; index 0 (the corner)
  // skipped.
  int kept = 0;
  long next = 1;
  while (kept < n) {
    if (next > 100L * n + 1000)
      throw std::runtime_error(
          fmt::format("greit 3-D: only {} of {} training centres fell inside the mesh", kept, n));
    const Eigen::Index batch = 2L * (n - kept) + 16;
    Points candidates(batch, 3);
    for (Eigen::Index i = 0; i < batch; ++i, ++next)
      candidates.row(i) =
          lo + Eigen::RowVector3d(radical_inverse(next, 2), radical_inverse(next, 3),
                                  radical_inverse(next, 5))
                   .cwiseProduct(span);
    const PointLocation at = locate_points(mesh.nodes, mesh.elements, candidates);
    for (Eigen::Index i = 0; i < batch && kept < n; ++i)
      if (at.element[static_cast<size_t>(i)] >= 0) out.centres.row(kept++) = candidates.row(i);
  }
  std::vector<Eigen::Triplet<double>> entries;
  add_quadrature(mesh, volumes, out.centres, out.radius, entries);
  out.X.resize(mesh.n_elems(), n);
  out.X.setFromTriplets(entries.begin(), entries.end());  // duplicates summed
  return out;
}

}  // namespace eit::recon
