// make_phantom_table: the synthetic phantom's noiseless voltages, from recon's FEM forward model,
// and the SyntheticPhantomSource constructor that builds its table from a mesh.
#include <cmath>
#include <numbers>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/recon/forward_model.hpp"

namespace eit::acquisition {

PhantomTable make_phantom_table(const recon::Mesh& mesh, const recon::Protocol& protocol,
                                const PhantomOptions& options) {
  if (options.positions < 2)
    throw std::invalid_argument(
        fmt::format("synthetic phantom: {} positions, expected at least 2", options.positions));
  if (mesh.n_elems() == 0)
    throw std::invalid_argument("synthetic phantom: the mesh has no elements");
  // Body radius and centre from the nodes (the phantom assumes a roughly circular body).
  const Eigen::RowVector2d centre = mesh.nodes.colwise().mean();
  const double radius = (mesh.nodes.rowwise() - centre).rowwise().norm().maxCoeff();
  Eigen::MatrixXd centroids(mesh.n_elems(), 2);
  for (int e = 0; e < mesh.n_elems(); ++e)
    centroids.row(e) = (mesh.nodes.row(mesh.elements(e, 0)) + mesh.nodes.row(mesh.elements(e, 1)) +
                        mesh.nodes.row(mesh.elements(e, 2))) /
                       3.0;
  recon::ForwardModel forward(mesh, protocol);
  PhantomTable table;
  table.homogeneous = forward.solve();
  table.frames.resize(options.positions, table.homogeneous.size());
  const double r_anomaly = options.anomaly_radius * radius;
  for (int k = 0; k < options.positions; ++k) {
    const double angle = 2 * std::numbers::pi * k / options.positions;
    const Eigen::RowVector2d c = centre + options.orbit_radius * radius *
                                              Eigen::RowVector2d(std::cos(angle), std::sin(angle));
    Eigen::VectorXd perm = Eigen::VectorXd::Ones(mesh.n_elems());
    int inside = 0;
    for (int e = 0; e < mesh.n_elems(); ++e)
      if ((centroids.row(e) - c).norm() < r_anomaly) {
        perm[e] = options.anomaly_conductivity;
        ++inside;
      }
    if (inside == 0)
      throw std::invalid_argument(fmt::format(
          "synthetic phantom: the anomaly (radius {:.3g}) at position {} covers no element of a "
          "{}-element mesh; use a finer mesh or a larger anomaly",
          r_anomaly, k, mesh.n_elems()));
    table.frames.row(k) = forward.solve(perm).transpose();
  }
  return table;
}

SyntheticPhantomSource::SyntheticPhantomSource(const recon::Mesh& mesh,
                                               const recon::Protocol& protocol,
                                               PhantomOptions options)
    : SyntheticPhantomSource(make_phantom_table(mesh, protocol, options), options) {}

}  // namespace eit::acquisition
