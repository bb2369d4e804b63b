// Damped Gauss–Newton for absolute imaging (contract and modes: gauss_newton.hpp).
#include "eit/recon/gauss_newton.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/gn_homogeneous_fit.hpp"
#include "gn_forward.hpp"
#include "gn_reciprocity.hpp"
#include "gn_step.hpp"

namespace eit::recon {
namespace detail {

// A forward model of one scalar type, the distinct rows of J and the per-iterate buffers.
template <class Scalar>
struct GnState {
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  GnState(const Mesh& mesh, const Protocol& protocol, const ForwardOptions& options)
      : forward(mesh, protocol, options), rows(group_reciprocal_rows(protocol)) {}
  GnForwardT<Scalar> forward;
  ReciprocalRows rows;
  Vector v;                                                  // F(σ), n_meas
  Vector residual, reduced;                                  // v − F(σ), and its r_u
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> jt;  // J_uᵀ, n_elems × n_rows
};

}  // namespace detail
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

template <class Vector>
bool all_finite(const Vector& x) {
  return x.allFinite();
}

// Conductivity > 0; for admittivity its real part (the imaginary part may take either sign).
bool all_positive_finite(const Eigen::VectorXd& x) {
  for (Eigen::Index e = 0; e < x.size(); ++e)
    if (!(x(e) > 0) || !std::isfinite(x(e))) return false;
  return true;
}

bool all_positive_finite(const Eigen::VectorXcd& x) {
  return x.allFinite() && all_positive_finite(Eigen::VectorXd(x.real()));
}

Eigen::VectorXd step(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r, double lambda,
                     const GnOptions& o, const Mesh& mesh, detail::GnStepTimes& times) {
  return detail::gn_step(jt, r, lambda, o, mesh, times);
}

Eigen::VectorXcd step(const Eigen::MatrixXcd& jt, const Eigen::VectorXcd& r, double lambda,
                      const GnOptions& o, const Mesh& mesh, detail::GnStepTimes& times) {
  return detail::gn_step_complex(jt, r, lambda, o, mesh, times);
}

void check_sizes(Eigen::Index v, Eigen::Index start, int n_meas, int n_elems) {
  if (v != n_meas)
    throw std::invalid_argument(fmt::format("gn: frame has {} values, expected {}", v, n_meas));
  if (start != 0 && start != n_elems)
    throw std::invalid_argument(
        fmt::format("gn: start has {} values, expected {}", start, n_elems));
}

}  // namespace

std::string_view to_string(GnOptions::Start start) noexcept {
  switch (start) {
    case GnOptions::Start::kScalar:
      return "scalar";
    case GnOptions::Start::kPerElement:
      return "element";
    case GnOptions::Start::kFitted:
      return "fitted";
  }
  return "?";
}

std::string_view to_string(GnOptions::Prior prior) noexcept {
  switch (prior) {
    case GnOptions::Prior::kKotre:
      return "kotre";
    case GnOptions::Prior::kTikhonov:
      return "tikhonov";
    case GnOptions::Prior::kLm:
      return "lm";
    case GnOptions::Prior::kNoser:
      return "noser";
    case GnOptions::Prior::kLaplacian:
      return "laplacian";
  }
  return "?";
}

GnOptions::Prior parse_gn_prior(std::string_view text) {
  if (text == "kotre") return GnOptions::Prior::kKotre;
  if (text == "tikhonov" || text == "dgn") return GnOptions::Prior::kTikhonov;
  if (text == "lm") return GnOptions::Prior::kLm;
  if (text == "noser") return GnOptions::Prior::kNoser;
  if (text == "laplacian") return GnOptions::Prior::kLaplacian;
  throw std::invalid_argument(
      fmt::format("gn prior '{}', expected kotre, tikhonov (dgn), lm, noser or laplacian", text));
}

GnOptions::Start parse_gn_start(std::string_view text) {
  if (text == "scalar") return GnOptions::Start::kScalar;
  if (text == "element") return GnOptions::Start::kPerElement;
  if (text == "fitted") return GnOptions::Start::kFitted;
  throw std::invalid_argument(
      fmt::format("gn start '{}', expected scalar, element or fitted", text));
}

std::string_view to_string(GnStatus status) noexcept {
  switch (status) {
    case GnStatus::kIterationLimit:
      return "iteration limit";
    case GnStatus::kConverged:
      return "converged";
    case GnStatus::kDiverged:
      return "diverged";
  }
  return "?";
}

void validate_gn_options(const GnOptions& o, int n_elems) {
  auto bad = [](const std::string& msg) { throw std::invalid_argument("gn options: " + msg); };
  if (!std::isfinite(o.p)) bad(fmt::format("p = {}, expected a finite exponent", o.p));
  if (!(o.lambda0 >= 0) || !std::isfinite(o.lambda0))
    bad(fmt::format("lambda0 = {}, expected a finite value ≥ 0", o.lambda0));
  if (!(o.lambda_decay > 0) || !std::isfinite(o.lambda_decay))
    bad(fmt::format("lambda_decay = {}, expected a finite value > 0", o.lambda_decay));
  if (!(o.lambda_min >= 0) || !std::isfinite(o.lambda_min))
    bad(fmt::format("lambda_min = {}, expected a finite value ≥ 0", o.lambda_min));
  if (o.frame_iterations < 1)
    bad(fmt::format("frame_iterations = {}, expected ≥ 1", o.frame_iterations));
  if (o.max_iterations < 1) bad(fmt::format("iterations = {}, expected ≥ 1", o.max_iterations));
  if (!(o.tolerance >= 0)) bad(fmt::format("tolerance = {}, expected ≥ 0", o.tolerance));
  if (o.start == GnOptions::Start::kScalar &&
      (!(o.start_value > 0) || !std::isfinite(o.start_value)))
    bad(fmt::format("start value = {}, expected a finite conductivity > 0", o.start_value));
  if (o.start == GnOptions::Start::kPerElement) {
    if (o.start_perm.size() != n_elems)
      bad(fmt::format("start_perm has {} values, the mesh has {} elements", o.start_perm.size(),
                      n_elems));
    if (!all_positive_finite(o.start_perm))
      bad("start_perm holds a non-finite or non-positive conductivity");
  }
}

GaussNewton::GaussNewton(const Mesh& mesh, const Protocol& protocol, const ForwardOptions& forward,
                         GnOptions options)
    : real_(std::make_unique<detail::GnState<double>>(mesh, protocol, forward)),
      forward_options_(forward),
      options_(std::move(options)) {
  validate_gn_options(options_, mesh.n_elems());
}

GaussNewton::~GaussNewton() = default;
GaussNewton::GaussNewton(GaussNewton&&) noexcept = default;
GaussNewton& GaussNewton::operator=(GaussNewton&&) noexcept = default;

int GaussNewton::n_elems() const noexcept { return real_->forward.mesh().n_elems(); }
int GaussNewton::n_meas() const noexcept { return real_->forward.n_meas(); }
int GaussNewton::n_rows() const noexcept { return static_cast<int>(real_->rows.rows.size()); }

detail::GnState<std::complex<double>>& GaussNewton::complex_state() {
  if (!complex_)
    complex_ = std::make_unique<detail::GnState<std::complex<double>>>(
        real_->forward.mesh(), real_->forward.protocol(), forward_options_);
  return *complex_;
}

template <class Scalar>
bool GaussNewton::evaluate(detail::GnState<Scalar>& state,
                           const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>& sigma,
                           bool with_jacobian) {
  auto t = Clock::now();
  if (!state.forward.set_conductivity(sigma)) return false;
  state.forward.measurements(state.v);
  timings_.forward += seconds_since(t);
  if (with_jacobian) {
    t = Clock::now();
    state.forward.jacobian_transposed(state.jt, state.rows.rows, options_.threads);
    timings_.jacobian += seconds_since(t);
  }
  return true;
}

const Eigen::VectorXd& GaussNewton::unit_measurements() {
  if (v_unit_.size() == 0) {
    if (!evaluate<double>(*real_, Eigen::VectorXd::Ones(n_elems()), false))
      throw std::runtime_error("gn: the forward system at σ = 1 is singular (mesh connected?)");
    v_unit_ = real_->v;
  }
  return v_unit_;
}

HomogeneousFit GaussNewton::homogeneous_fit(const Eigen::VectorXd& v) {
  const Eigen::VectorXd& unit = unit_measurements();
  if (v.size() != unit.size())
    throw std::invalid_argument(
        fmt::format("gn: frame has {} values, expected {}", v.size(), unit.size()));
  return recon::fit_homogeneous(unit, v);
}

HomogeneousFitComplex GaussNewton::homogeneous_fit(const Eigen::VectorXcd& v) {
  const Eigen::VectorXd& unit = unit_measurements();
  if (v.size() != unit.size())
    throw std::invalid_argument(
        fmt::format("gn: frame has {} values, expected {}", v.size(), unit.size()));
  return recon::fit_homogeneous(unit, v);
}

double GaussNewton::fit_homogeneous(const Eigen::VectorXd& v) { return homogeneous_fit(v).sigma; }

std::complex<double> GaussNewton::fit_homogeneous_complex(const Eigen::VectorXcd& v) {
  const std::complex<double> sigma = homogeneous_fit(v).sigma;
  if (!std::isfinite(sigma.real())) return {std::numeric_limits<double>::quiet_NaN(), 0};
  return sigma;
}

Eigen::VectorXd GaussNewton::start_for(const Eigen::VectorXd& v) {
  const int n_e = n_elems();
  switch (options_.start) {
    case GnOptions::Start::kPerElement:
      return options_.start_perm;
    case GnOptions::Start::kFitted: {
      const double s = fit_homogeneous(v);
      return Eigen::VectorXd::Constant(n_e, std::isfinite(s) ? s : options_.start_value);
    }
    case GnOptions::Start::kScalar:
      break;
  }
  return Eigen::VectorXd::Constant(n_e, options_.start_value);
}

Eigen::VectorXcd GaussNewton::start_for_complex(const Eigen::VectorXcd& v) {
  const int n_e = n_elems();
  switch (options_.start) {
    case GnOptions::Start::kPerElement:
      return options_.start_perm.cast<std::complex<double>>();
    case GnOptions::Start::kFitted: {
      const std::complex<double> s = fit_homogeneous_complex(v);
      return Eigen::VectorXcd::Constant(
          n_e, std::isfinite(s.real()) ? s : std::complex<double>(options_.start_value, 0));
    }
    case GnOptions::Start::kScalar:
      break;
  }
  return Eigen::VectorXcd::Constant(n_e, options_.start_value);
}

template <class Vector>
double GaussNewton::lambda_scale_for(const Vector& v) {
  if (options_.start != GnOptions::Start::kFitted) return 1.0;
  return gn_lambda_scale(options_, homogeneous_fit(v));
}

template <class Scalar>
BasicGnResult<Eigen::Matrix<Scalar, Eigen::Dynamic, 1>> GaussNewton::iterate(
    detail::GnState<Scalar>& state, const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>& v,
    Eigen::Matrix<Scalar, Eigen::Dynamic, 1> sigma, bool scalar_start, double lambda_scale,
    int iterations,
    const std::function<void(int, const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>&)>& on_iteration) {
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  const Mesh& mesh = state.forward.mesh();
  BasicGnResult<Vector> result;
  result.sigma = std::move(sigma);
  // pyEIT's test divides by the norm of x0 as given: a scalar start is one number.
  const double start_norm = scalar_start ? std::abs(result.sigma(0)) : result.sigma.norm();
  double lambda = options_.lambda0;
  detail::GnStepTimes step_times;
  for (int k = 1; k <= iterations; ++k) {
    if (!evaluate(state, result.sigma, true)) {
      result.status = GnStatus::kDiverged;
      return result;
    }
    state.residual = v - state.v;
    detail::reduce_residual(state.rows, state.residual, state.reduced);
    step_times = {};
    Vector d;
    try {
      d = step(state.jt, state.reduced, lambda * lambda_scale, options_, mesh, step_times);
    } catch (const std::runtime_error&) {  // normal matrix not positive definite
      result.status = GnStatus::kDiverged;
      return result;
    }
    timings_.system += step_times.system;
    timings_.solve += step_times.solve;
    ++timings_.iterations;

    Vector next = result.sigma - d;
    const double denominator = options_.pyeit_compat ? start_norm : result.sigma.norm();
    result.last_step = d.norm() / denominator;
    const bool converged = result.last_step < options_.tolerance;
    if (options_.pyeit_compat ? !all_finite(next) : !all_positive_finite(next)) {
      result.status = GnStatus::kDiverged;
      return result;
    }
    if (converged && options_.pyeit_compat) {  // pyEIT breaks before yielding the new iterate
      result.status = GnStatus::kConverged;
      return result;
    }
    result.sigma = std::move(next);
    result.iterations = k;
    if (on_iteration) on_iteration(k, result.sigma);
    if (converged) {
      result.status = GnStatus::kConverged;
      return result;
    }
    lambda = std::max(lambda * options_.lambda_decay, options_.lambda_min);
  }
  result.status = GnStatus::kIterationLimit;
  return result;
}

GnResult GaussNewton::solve(const Eigen::VectorXd& v, const Eigen::VectorXd& start,
                            int max_iterations,
                            const std::function<void(int, const Eigen::VectorXd&)>& on_iteration) {
  check_sizes(v.size(), start.size(), n_meas(), n_elems());
  const bool scalar_start = start.size() == 0 && options_.start != GnOptions::Start::kPerElement;
  return iterate(*real_, v, start.size() ? start : start_for(v), scalar_start, lambda_scale_for(v),
                 max_iterations < 0 ? options_.max_iterations : max_iterations, on_iteration);
}

GnComplexResult GaussNewton::solve_complex(
    const Eigen::VectorXcd& v, const Eigen::VectorXcd& start, int max_iterations,
    const std::function<void(int, const Eigen::VectorXcd&)>& on_iteration) {
  check_sizes(v.size(), start.size(), n_meas(), n_elems());
  const bool scalar_start = start.size() == 0 && options_.start != GnOptions::Start::kPerElement;
  return iterate(complex_state(), v, start.size() ? start : start_for_complex(v), scalar_start,
                 lambda_scale_for(v), max_iterations < 0 ? options_.max_iterations : max_iterations,
                 on_iteration);
}

}  // namespace eit::recon
