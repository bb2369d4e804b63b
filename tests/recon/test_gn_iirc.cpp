// Absolute imaging of a real tank: iirc_data_2006.mat (16 electrodes, a plexiglas rod turning in
// saline) through Gauss–Newton on the built-in unit-disc, point-electrode mesh. The volts are in
// the device's units and EIDORS' polarity; the fitted start (σ₀ from the frame) makes the scale
// irrelevant, −v makes the polarity the model's. Every frame must converge without divergence,
// the residual must fall below the homogeneous fit's, and the rod must turn ~11° per frame.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include <Eigen/Dense>

#include "eit/recon/array_file.hpp"
#include "eit/recon/default_circle_mesh.hpp"
#include "eit/recon/forward_model.hpp"
#include "eit/recon/gauss_newton.hpp"
#include "eit/recon/protocol.hpp"
#include "adjacent_index.hpp"
#include "test_data.hpp"

using namespace eit::recon;
using eit::test::adjacent_meas_index;

namespace {

// Frame f of a 256 × n table, polarity flipped to the model's.
Eigen::VectorXcd iirc_frame(const DenseArray& a, size_t f) {
  const size_t n = a.shape[1];
  Eigen::VectorXcd v(208);
  for (int j = 0; j < 16; ++j)
    for (int i = 0; i < 16; ++i)
      if (const int q = adjacent_meas_index(j, i); q >= 0) {
        const size_t k = static_cast<size_t>(16 * j + i) * n + f;
        v[q] = -std::complex<double>(a.real[k], a.imag.empty() ? 0.0 : a.imag[k]);
      }
  return v;
}

// Polar angle (degrees) of an image's anomaly: |x|⁴-weighted centroid of the elements that share
// the sign of the largest |x| (x: σ minus the recording's mean σ, what moves: the rod).
double anomaly_angle(const Mesh& mesh, const Eigen::VectorXd& x) {
  Eigen::Index k;
  x.cwiseAbs().maxCoeff(&k);
  double sx = 0, sy = 0;
  for (int e = 0; e < mesh.n_elems(); ++e) {
    if (x(e) * x(k) <= 0) continue;
    Eigen::RowVector2d c = Eigen::RowVector2d::Zero();
    for (int m = 0; m < 3; ++m) c += mesh.nodes.row(mesh.elements(e, m)).head<2>() / 3.0;
    const double w = std::pow(std::abs(x(e)), 4);
    sx += w * c.x();
    sy += w * c.y();
  }
  return std::atan2(sy, sx) * 180 / std::numbers::pi;
}

GnOptions iirc_options() {
  GnOptions o;  // kotre p 0.25, λ₀ 1, decay 0.1, tolerance 1e-4: the defaults
  o.start = GnOptions::Start::kFitted;
  o.lambda_min = 1e-2;  // real data: the model error allows no less (docs/formats.md, "gn")
  return o;
}

}  // namespace

TEST_CASE("gn on the IIRC tank: every frame converges and the rod turns ~11° per frame") {
  const auto iirc = eit::test::shared_data_file("recordings/iirc_data_2006.mat");
  if (!iirc) return;
  if (!mat_reader_available()) {
    eit::test::report_skip("gn IIRC", "built without libmatio");
    return;
  }
  const DenseArray rot = read_mat_variable(*iirc, "v_rotate");
  REQUIRE(rot.shape == std::vector<size_t>{256, 100});
  const Mesh mesh = default_circle_mesh();
  const Protocol protocol = make_protocol({});
  ForwardModel forward(mesh, protocol);
  GaussNewton gn(mesh, protocol, {}, iirc_options());

  const Eigen::VectorXd v0 = iirc_frame(rot, 0).real();
  const HomogeneousFit fit = gn.homogeneous_fit(v0);
  MESSAGE("frame 0 vs F(1): σ₀ ", fit.sigma, ", correlation ", fit.correlation, ", residual ",
          fit.residual, " (unflipped correlation ",
          gn.homogeneous_fit(Eigen::VectorXd(-v0)).correlation, ")");
  CHECK(fit.correlation > 0.9);  // the protocol's order and pattern are IIRC's

  const GnResult cold = gn.solve(v0);
  const double res_end = (forward.solve(cold.sigma) - v0).norm() / v0.norm();
  MESSAGE("cold solve: ", to_string(cold.status), " after ", cold.iterations,
          " iterations, residual ", fit.residual, " → ", res_end);
  REQUIRE(cold.status != GnStatus::kDiverged);
  CHECK(res_end < 0.8 * fit.residual);

  // Streaming: each later frame warm-starts from the previous σ with 3 iterations.
  std::vector<Eigen::VectorXd> images{cold.sigma};
  int diverged = 0;
  for (size_t f = 1; f < 100; ++f) {
    const GnResult r = gn.solve(iirc_frame(rot, f).real(), images.back(), 3);
    diverged += r.status == GnStatus::kDiverged;
    images.push_back(r.sigma);
  }
  CHECK(diverged == 0);
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(mesh.n_elems());
  for (const auto& x : images) mean += x / 100.0;
  std::vector<double> angles;
  for (const auto& x : images) angles.push_back(anomaly_angle(mesh, x - mean));
  double sum = 0;
  int turns = 0;
  for (size_t f = 1; f < angles.size(); ++f) {
    const double step = std::remainder(angles[f] - angles[f - 1], 360.0);
    sum += step;
    turns += step < 0;
  }
  const double mean_step = sum / 99;
  MESSAGE("rod turns ", mean_step, "° per frame on average; ", turns, " of 99 steps clockwise");
  CHECK(std::abs(mean_step) > 9.0);
  CHECK(std::abs(mean_step) < 13.0);
  CHECK(std::max(turns, 99 - turns) >= 90);
}

TEST_CASE("gn on the IIRC tank, complex: the first frames converge, Re σ₀ > 0") {
  const auto iirc = eit::test::shared_data_file("recordings/iirc_data_2006.mat");
  if (!iirc) return;
  if (!mat_reader_available()) {
    eit::test::report_skip("gn IIRC complex", "built without libmatio");
    return;
  }
  const DenseArray rot = read_mat_variable(*iirc, "v_rotate");
  REQUIRE(!rot.imag.empty());
  const Mesh mesh = default_circle_mesh();
  const Protocol protocol = make_protocol({});
  GaussNewton gn(mesh, protocol, {}, iirc_options());
  const Eigen::VectorXcd v0 = iirc_frame(rot, 0);
  const HomogeneousFitComplex fit = gn.homogeneous_fit(v0);
  MESSAGE("complex frame 0: σ₀ ", fit.sigma.real(), " + ", fit.sigma.imag(), "i, correlation ",
          fit.correlation, ", residual ", fit.residual);
  const GnComplexResult cold = gn.solve_complex(v0);
  REQUIRE(cold.status != GnStatus::kDiverged);
  Eigen::VectorXcd sigma = cold.sigma;
  int diverged = 0;
  for (size_t f = 1; f < 10; ++f) {
    const GnComplexResult r = gn.solve_complex(iirc_frame(rot, f), sigma, 3);
    diverged += r.status == GnStatus::kDiverged;
    sigma = r.sigma;
  }
  CHECK(diverged == 0);
  CHECK(sigma.real().minCoeff() > 0);
}
