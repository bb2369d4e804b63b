// Homogeneous fit of a frame against F(1) (contract: gn_homogeneous_fit.hpp).
#include "eit/recon/gn_homogeneous_fit.hpp"

#include <cmath>
#include <limits>

namespace eit::recon {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class Vector>
auto fit(const Eigen::VectorXd& unit, const Vector& v) {
  using Scalar = typename Vector::Scalar;
  BasicHomogeneousFit<Scalar> f{Scalar(kNaN), Scalar(kNaN), kNaN, kNaN};
  const double uu = unit.squaredNorm(), vv = v.squaredNorm();
  // F(1) is real: F(1)ᵀv needs no conjugate.
  const Scalar uv = (unit.template cast<Scalar>().array() * v.array()).sum();
  if (!(uu > 0) || !(vv > 0) || !std::isfinite(uu) || !std::isfinite(vv)) return f;
  f.scale = uv / uu;
  f.correlation = std::real(uv) / std::sqrt(uu * vv);
  f.residual = (v - f.scale * unit.template cast<Scalar>()).norm() / std::sqrt(vv);
  if (std::real(f.scale) > 0 && std::isfinite(std::real(f.scale)) &&
      std::isfinite(std::imag(f.scale)))
    f.sigma = Scalar(1) / f.scale;
  return f;
}

}  // namespace

HomogeneousFit fit_homogeneous(const Eigen::VectorXd& unit, const Eigen::VectorXd& v) {
  return fit(unit, v);
}

HomogeneousFitComplex fit_homogeneous(const Eigen::VectorXd& unit, const Eigen::VectorXcd& v) {
  return fit(unit, v);
}

double gn_lambda_scale(const GnOptions& o, double sigma0) {
  if (!(sigma0 > 0) || !std::isfinite(sigma0)) return 1.0;
  double p = 0;  // tikhonov (R = I), laplacian (LᵀL): independent of J
  switch (o.prior) {
    case GnOptions::Prior::kKotre:
      p = o.p;
      break;
    case GnOptions::Prior::kLm:
      p = 1.0;
      break;
    case GnOptions::Prior::kNoser:
      p = 0.5;
      break;
    case GnOptions::Prior::kTikhonov:
    case GnOptions::Prior::kLaplacian:
      break;
  }
  return std::pow(sigma0, 4 * (p - 1));
}

}  // namespace eit::recon
