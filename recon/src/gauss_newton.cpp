// Damped Gauss–Newton for absolute imaging (contract and modes: gauss_newton.hpp).
#include "eit/recon/gauss_newton.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "gn_forward.hpp"
#include "gn_step.hpp"

namespace eit::recon {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool all_finite(const Eigen::VectorXd& x) {
  for (Eigen::Index e = 0; e < x.size(); ++e)
    if (!std::isfinite(x(e))) return false;
  return true;
}

bool all_positive_finite(const Eigen::VectorXd& x) {
  for (Eigen::Index e = 0; e < x.size(); ++e)
    if (!(x(e) > 0) || !std::isfinite(x(e))) return false;
  return true;
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
    : forward_(std::make_unique<detail::GnForward>(mesh, protocol, forward)),
      options_(std::move(options)) {
  validate_gn_options(options_, mesh.n_elems());
}

GaussNewton::~GaussNewton() = default;
GaussNewton::GaussNewton(GaussNewton&&) noexcept = default;
GaussNewton& GaussNewton::operator=(GaussNewton&&) noexcept = default;

int GaussNewton::n_elems() const noexcept { return forward_->mesh().n_elems(); }
int GaussNewton::n_meas() const noexcept { return forward_->n_meas(); }

bool GaussNewton::evaluate(const Eigen::VectorXd& sigma, bool with_jacobian) {
  auto t = Clock::now();
  if (!forward_->set_conductivity(sigma)) return false;
  forward_->measurements(v_);
  timings_.forward += seconds_since(t);
  if (with_jacobian) {
    t = Clock::now();
    forward_->jacobian_transposed(jt_, options_.threads);
    timings_.jacobian += seconds_since(t);
  }
  return true;
}

double GaussNewton::fit_homogeneous(const Eigen::VectorXd& v) {
  if (v_unit_.size() == 0) {
    if (!evaluate(Eigen::VectorXd::Ones(n_elems()), false))
      throw std::runtime_error("gn: the forward system at σ = 1 is singular (mesh connected?)");
    v_unit_ = v_;
  }
  if (v.size() != v_unit_.size())
    throw std::invalid_argument(
        fmt::format("gn: frame has {} values, expected {}", v.size(), v_unit_.size()));
  const double uv = v_unit_.dot(v);
  if (!(uv > 0) || !std::isfinite(uv)) return std::numeric_limits<double>::quiet_NaN();
  return v_unit_.squaredNorm() / uv;
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

GnResult GaussNewton::solve(const Eigen::VectorXd& v, const Eigen::VectorXd& start,
                            int max_iterations,
                            const std::function<void(int, const Eigen::VectorXd&)>& on_iteration) {
  const Mesh& mesh = forward_->mesh();
  const auto n_meas = static_cast<Eigen::Index>(forward_->n_meas());
  if (v.size() != n_meas)
    throw std::invalid_argument(
        fmt::format("gn: frame has {} values, expected {}", v.size(), n_meas));
  if (start.size() != 0 && start.size() != mesh.n_elems())
    throw std::invalid_argument(
        fmt::format("gn: start has {} values, expected {}", start.size(), mesh.n_elems()));
  const int iterations = max_iterations < 0 ? options_.max_iterations : max_iterations;

  GnResult result;
  result.sigma = start.size() ? start : start_for(v);
  // pyEIT's test divides by the norm of x0 as given: a scalar start is one number.
  const double start_norm = start.size() == 0 && options_.start != GnOptions::Start::kPerElement
                                ? std::abs(result.sigma(0))
                                : result.sigma.norm();
  double lambda = options_.lambda0;
  detail::GnStepTimes step_times;
  for (int k = 1; k <= iterations; ++k) {
    if (!evaluate(result.sigma, true)) {
      result.status = GnStatus::kDiverged;
      return result;
    }
    const Eigen::VectorXd residual = v - v_;
    step_times = {};
    Eigen::VectorXd d;
    try {
      d = detail::gn_step(jt_, residual, lambda, options_, mesh, step_times);
    } catch (const std::runtime_error&) {  // normal matrix not positive definite
      result.status = GnStatus::kDiverged;
      return result;
    }
    timings_.system += step_times.system;
    timings_.solve += step_times.solve;
    ++timings_.iterations;

    Eigen::VectorXd next = result.sigma - d;
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

}  // namespace eit::recon
