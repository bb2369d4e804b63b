#pragma once
// Shared by the real and complex Gauss–Newton tests (test_gauss_newton, test_gn_complex): the
// two-disc phantom, and the settings under which a noiseless phantom is recovered.
#include <Eigen/Core>

#include "eit/recon/gauss_newton.hpp"
#include "eit/recon/mesh.hpp"

namespace eit::test {

// σ per element by centroid: `background`, with discs of radius 0.3 at (0.4, 0.4) (`upper_right`)
// and at (−0.4, −0.4) (`lower_left`). Scalar: double or std::complex<double>.
template <typename Scalar>
Eigen::Matrix<Scalar, Eigen::Dynamic, 1> two_disc_phantom(const recon::Mesh& mesh,
                                                          Scalar background, Scalar upper_right,
                                                          Scalar lower_left) {
  Eigen::Matrix<Scalar, Eigen::Dynamic, 1> s =
      Eigen::Matrix<Scalar, Eigen::Dynamic, 1>::Constant(mesh.n_elems(), background);
  for (int e = 0; e < mesh.n_elems(); ++e) {
    Eigen::RowVector2d c = Eigen::RowVector2d::Zero();
    for (int k = 0; k < 3; ++k) c += mesh.nodes.row(mesh.elements(e, k)) / 3.0;
    if ((c - Eigen::RowVector2d(0.4, 0.4)).norm() < 0.3) s(e) = upper_right;
    if ((c - Eigen::RowVector2d(-0.4, -0.4)).norm() < 0.3) s(e) = lower_left;
  }
  return s;
}

// Default mode from the fitted homogeneous start, λ from 0.1 halving to 1e-4, 15 iterations and
// no early stop: enough to recover a noiseless phantom on layered_circle_mesh(16, 6).
inline recon::GnOptions noiseless_phantom_options() {
  recon::GnOptions o;
  o.start = recon::GnOptions::Start::kFitted;
  o.lambda0 = 0.1;
  o.lambda_decay = 0.5;
  o.lambda_min = 1e-4;
  o.max_iterations = 15;
  o.tolerance = 0;
  return o;
}

}  // namespace eit::test
