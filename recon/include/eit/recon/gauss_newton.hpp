#pragma once
// Absolute (static) imaging by damped Gauss–Newton on the FEM forward model:
//
//   x_{k+1} = x_k − d_k,   d_k = (JᵀJ + λ_k R)⁻¹ Jᵀ (v − F(x_k)),   λ_{k+1} = max(λ_k·decay, λ_min)
//
// with J = J(x_k) in pyEIT's sign (J = −∂v/∂σ, so the minus step moves towards the data) and R a
// prior: kotre diag(JᵀJ)^p, lm diag(JᵀJ), noser diag(JᵀJ)^0.5, tikhonov I (pyEIT 'dgn'),
// laplacian LᵀL (element adjacency). The step is solved through the smaller of the two normal
// equations (gn_step.hpp): n_meas-sized J R⁻¹ Jᵀ + λI for diagonal R when n_meas ≤ n_elems, else
// the n_elems-sized JᵀJ + λR, dense Cholesky either way. J and the residual enter only through
// their distinct rows (reciprocal measurements share a row of J: gn_reciprocity.hpp), which
// leaves the step unchanged and halves every product for a full adjacent protocol; "n_meas" above
// is then the number of distinct rows (16 electrodes: 104 of 208; 64: 1,952 of 3,904).
//
// Complex conductivity (admittivity, σ + iωε per element) when the frame is complex:
// solve_complex. The forward model is then complex symmetric (sparse LU), J = −∂v/∂σ the
// holomorphic derivative, and the step d = (JᴴJ + λR)⁻¹ Jᴴ r with R from diag(JᴴJ) (real),
// Hermitian normal matrices, complex Cholesky (one thread). Modes, stop test and λ schedule are
// the real ones; "σ ≤ 0" reads Re σ ≤ 0 (the imaginary part may take either sign).
//
// Two modes (docs/formats.md, "gn"):
//  * pyeit_compat reproduces pyEIT 1.2.4 JAC.gn: stop when ‖d_k‖ / ‖x_start‖ < tol with the norm of
//    the *start value as given* (a scalar start counts as one number, so the test is absolute), and
//    on that stop the last step is dropped (the previous iterate is returned; the start when the
//    first step already passes).
//  * default: the test is relative to the current iterate, ‖d_k‖ / ‖x_k‖ (norm over elements), and
//    the step that passes it is kept.
//    A non-positive σ stops the solve (kDiverged, the last good iterate returned): a conductivity
//    ≤ 0 has no physical meaning. pyEIT goes on through negative σ (its own static example does
//    from iteration 6 on), so the compat mode does too and stops only on a non-finite iterate or a
//    singular system.
//
// Fitted start (GnOptions::Start::kFitted): σ₀ is fitted to each frame (gn_homogeneous_fit.hpp)
// and every step of that solve, cold or warm, uses λ·σ₀^(4(p−1)) — the step for σ/σ₀ against
// v·σ₀, so λ means the same for a frame in any units (IIRC's volts: σ₀ = 2.5·10⁻⁵). The scalar
// and per-element starts use λ as given (pyEIT-compat reproduces pyEIT with them).
//
// The forward problem is solved by an internal re-assembling model (gn_forward.hpp: pattern,
// ordering and symbolic factorisation once; values and numeric factorisation per iterate), checked
// against ForwardModel by the tests. Not thread-safe; allocates on every iteration (sparse
// numeric factorisation, Jᵀ's gradient tables, the dense normal matrix).
#include <complex>
#include <functional>
#include <string>
#include <string_view>

#include <Eigen/Core>

#include <memory>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/gn_homogeneous_fit.hpp"
#include "eit/recon/gn_options.hpp"

namespace eit::recon {
namespace detail {
template <class Scalar>
struct GnState;
}

enum class GnStatus { kIterationLimit, kConverged, kDiverged };
std::string_view to_string(GnStatus status) noexcept;

template <class Vector>
struct BasicGnResult {
  Vector sigma;           // n_elems: the returned iterate
  int iterations = 0;     // iterations whose iterate is in sigma's history (pyEIT: yielded)
  GnStatus status = GnStatus::kIterationLimit;
  double last_step = 0;  // the convergence measure of the last step computed
};
using GnResult = BasicGnResult<Eigen::VectorXd>;
using GnComplexResult = BasicGnResult<Eigen::VectorXcd>;

// Seconds spent in each part, summed over iterations since the last reset.
struct GnTimings {
  double forward = 0, jacobian = 0, system = 0, solve = 0;
  double total = 0;  // the CUDA solver's device time per iteration, summed (also with a graph,
                     // where the four parts are not split); the CPU solver leaves it 0
  int iterations = 0;
};

class GaussNewton {
 public:
  // Throws std::invalid_argument for a mesh/protocol mismatch or bad options.
  GaussNewton(const Mesh& mesh, const Protocol& protocol, const ForwardOptions& forward,
              GnOptions options);
  ~GaussNewton();
  GaussNewton(GaussNewton&&) noexcept;
  GaussNewton& operator=(GaussNewton&&) noexcept;

  // Solves for v (n_meas). start: empty = the options' start; otherwise warm start (n_elems).
  // max_iterations < 0: the options' count. on_iteration(k, σ) is called after iteration k (1..)
  // with each iterate that the result's history holds (pyEIT's yielded values in compat mode).
  GnResult solve(const Eigen::VectorXd& v, const Eigen::VectorXd& start = {},
                 int max_iterations = -1,
                 const std::function<void(int, const Eigen::VectorXd&)>& on_iteration = {});

  // The same for a complex frame v (n_meas): complex σ, complex start (empty = the options' start,
  // real, or the fitted complex homogeneous value). The real solve is untouched by this one.
  GnComplexResult solve_complex(
      const Eigen::VectorXcd& v, const Eigen::VectorXcd& start = {}, int max_iterations = -1,
      const std::function<void(int, const Eigen::VectorXcd&)>& on_iteration = {});

  // The frame against this model's homogeneous voltages F(1) (gn_homogeneous_fit.hpp): σ₀
  // minimising ‖v − F(σ₀·1)‖, the correlation and the relative residual. Throws on a size
  // mismatch.
  HomogeneousFit homogeneous_fit(const Eigen::VectorXd& v);
  HomogeneousFitComplex homogeneous_fit(const Eigen::VectorXcd& v);
  // σ₀ alone (NaN when v·F(1) ≤ 0).
  double fit_homogeneous(const Eigen::VectorXd& v);

  // The start value the options give for v (scalar, per element or fitted), n_elems.
  Eigen::VectorXd start_for(const Eigen::VectorXd& v);
  // Complex: 1/s with s minimising ‖v − s·F(1)‖ over complex s (NaN when Re σ₀ ≤ 0), and the
  // complex start (scalar and per-element starts are real).
  std::complex<double> fit_homogeneous_complex(const Eigen::VectorXcd& v);
  Eigen::VectorXcd start_for_complex(const Eigen::VectorXcd& v);

  const GnOptions& options() const noexcept { return options_; }
  int n_elems() const noexcept;
  int n_meas() const noexcept;
  int n_rows() const noexcept;  // distinct rows of J (the reduced "n_meas" of the step)
  const GnTimings& timings() const noexcept { return timings_; }
  void reset_timings() noexcept { timings_ = {}; }

 private:
  template <class Scalar>
  BasicGnResult<Eigen::Matrix<Scalar, Eigen::Dynamic, 1>> iterate(
      detail::GnState<Scalar>& state, const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>& v,
      Eigen::Matrix<Scalar, Eigen::Dynamic, 1> sigma, bool scalar_start, double lambda_scale,
      int iterations,
      const std::function<void(int, const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>&)>&
          on_iteration);
  // The fitted start's λ factor for frame v (gn_lambda_scale; 1 for the other starts).
  template <class Vector>
  double lambda_scale_for(const Vector& v);
  template <class Scalar>
  bool evaluate(detail::GnState<Scalar>& state,
                const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>& sigma, bool with_jacobian);
  const Eigen::VectorXd& unit_measurements();              // F(1), computed once
  detail::GnState<std::complex<double>>& complex_state();  // made on first use

  std::unique_ptr<detail::GnState<double>> real_;
  std::unique_ptr<detail::GnState<std::complex<double>>> complex_;
  ForwardOptions forward_options_;
  GnOptions options_;
  Eigen::VectorXd v_unit_;  // F(1), for the fitted start
  GnTimings timings_;
};

}  // namespace eit::recon
