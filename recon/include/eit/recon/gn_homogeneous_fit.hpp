#pragma once
// The best homogeneous conductivity for a frame, and how well the model's homogeneous voltages
// explain it. Pure functions; used by Gauss–Newton's fitted start (gauss_newton.hpp).
//
// With point electrodes the forward model is linear in 1/σ for a homogeneous σ: F(σ·1) = F(1)/σ.
// The least-squares fit of v ≈ s·F(1) is s = F(1)·v / ‖F(1)‖², so σ₀ = 1/s =
// argmin_σ ‖v − F(σ·1)‖. Under the complete electrode model the contact impedance does not
// scale with σ, so σ₀ is the fit of that model's 1/σ family: a start, not the exact optimum.
//
// The correlation (cosine of the angle between v and F(1)) says whether the frame matches the
// model at all: near +1 for a recording in the model's order, sign and pattern; near −1 for one
// of opposite polarity (EIDORS-convention data such as IIRC: `--invert`); near 0 for another
// measurement order or pattern. Only s > 0 gives a conductivity (σ₀ is NaN otherwise).
#include <cmath>
#include <complex>

#include <Eigen/Core>

#include "eit/recon/gn_options.hpp"

namespace eit::recon {

template <class Scalar>
struct BasicHomogeneousFit {
  Scalar sigma;        // σ₀ = 1/s; NaN when s (its real part) is ≤ 0 or not finite
  Scalar scale;        // s: v ≈ s·F(1)
  double correlation;  // Re(F(1)·v) / (‖F(1)‖ ‖v‖), in [−1, 1]; NaN for a zero vector
  double residual;     // ‖v − s·F(1)‖ / ‖v‖: what no homogeneous σ explains
};
using HomogeneousFit = BasicHomogeneousFit<double>;
using HomogeneousFitComplex = BasicHomogeneousFit<std::complex<double>>;

// unit = F(1) (n_meas), v the frame (same length; the caller checks sizes).
HomogeneousFit fit_homogeneous(const Eigen::VectorXd& unit, const Eigen::VectorXd& v);
HomogeneousFitComplex fit_homogeneous(const Eigen::VectorXd& unit, const Eigen::VectorXcd& v);

// λ is meant for the problem at unit scale (σ₀ = 1, the scale of pyEIT's examples): JᵀJ grows
// as σ₀⁻⁴ and a diag(JᵀJ)^p prior as σ₀^(−4p), so solving for σ/σ₀ against v·σ₀ with λ is the
// σ-space step with λ·σ₀^(4(p−1)). This returns that factor for the options' prior (kotre p,
// lm 1, noser ½, tikhonov and laplacian 0); 1 when σ₀ is not a finite positive number.
double gn_lambda_scale(const GnOptions& options, double sigma0_magnitude);

// Below this correlation with F(1) a frame is not the model's measurement (a homogeneous tank
// gives > 0.99; IIRC's frames 0.994 once their polarity is the model's, −0.994 before).
inline constexpr double kGnMatchCorrelation = 0.5;

// The λ factor for a frame from its fit: gn_lambda_scale(|σ₀|) when the fit explains the frame
// (correlation ≥ kGnMatchCorrelation), else 1. A frame no homogeneous σ explains (noise, a
// ±1e30 glitch whose fit is numerically zero or tiny) must not turn λ into ~1e40 and pass as
// converged; it keeps λ as given and diverges or not on its own. Shared by the CPU and CUDA
// solvers so they agree frame for frame.
template <class Scalar>
double gn_lambda_scale(const GnOptions& options, const BasicHomogeneousFit<Scalar>& fit) {
  if (!(fit.correlation >= kGnMatchCorrelation)) return 1.0;
  return gn_lambda_scale(options, std::abs(fit.sigma));
}

}  // namespace eit::recon
