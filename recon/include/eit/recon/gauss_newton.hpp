#pragma once
// Absolute (static) imaging by damped Gauss–Newton on the FEM forward model:
//
//   x_{k+1} = x_k − d_k,   d_k = (JᵀJ + λ_k R)⁻¹ Jᵀ (v − F(x_k)),   λ_{k+1} = max(λ_k·decay, λ_min)
//
// with J = J(x_k) in pyEIT's sign (J = −∂v/∂σ, so the minus step moves towards the data) and R a
// prior: kotre diag(JᵀJ)^p, lm diag(JᵀJ), noser diag(JᵀJ)^0.5, tikhonov I (pyEIT 'dgn'),
// laplacian LᵀL (element adjacency). The step is solved through the smaller of the two normal
// equations (gn_step.hpp): n_meas-sized J R⁻¹ Jᵀ + λI for diagonal R when n_meas ≤ n_elems, else
// the n_elems-sized JᵀJ + λR, dense Cholesky either way.
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
// The forward problem is solved by an internal re-assembling model (gn_forward.hpp: pattern,
// ordering and symbolic factorisation once; values and numeric factorisation per iterate), checked
// against ForwardModel by the tests. Not thread-safe; allocates on every iteration (sparse
// numeric factorisation, Jᵀ's gradient tables, the dense normal matrix).
#include <functional>
#include <string>
#include <string_view>

#include <Eigen/Core>

#include <memory>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/gn_options.hpp"

namespace eit::recon {
namespace detail {
class GnForward;
}

enum class GnStatus { kIterationLimit, kConverged, kDiverged };
std::string_view to_string(GnStatus status) noexcept;

struct GnResult {
  Eigen::VectorXd sigma;  // n_elems: the returned iterate
  int iterations = 0;     // iterations whose iterate is in sigma's history (pyEIT: yielded)
  GnStatus status = GnStatus::kIterationLimit;
  double last_step = 0;  // the convergence measure of the last step computed
};

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

  // σ₀ minimising ‖v − F(σ₀·1)‖ over homogeneous conductivities (closed form: F(σ·1) = F(1)/σ
  // for point electrodes; under CEM the contact impedance does not scale, so it is the fit of
  // that model's 1/σ family, a good start rather than the exact optimum). NaN when v·F(1) ≤ 0.
  double fit_homogeneous(const Eigen::VectorXd& v);

  // The start value the options give for v (scalar, per element or fitted), n_elems.
  Eigen::VectorXd start_for(const Eigen::VectorXd& v);

  const GnOptions& options() const noexcept { return options_; }
  int n_elems() const noexcept;
  int n_meas() const noexcept;
  const GnTimings& timings() const noexcept { return timings_; }
  void reset_timings() noexcept { timings_ = {}; }

 private:
  bool evaluate(const Eigen::VectorXd& sigma, bool with_jacobian);

  std::unique_ptr<detail::GnForward> forward_;
  GnOptions options_;
  Eigen::VectorXd v_unit_;  // F(1), for the fitted start
  Eigen::VectorXd v_;       // F(σ) at the current iterate
  Eigen::MatrixXd jt_;      // Jᵀ at the current iterate
  GnTimings timings_;
};

}  // namespace eit::recon
