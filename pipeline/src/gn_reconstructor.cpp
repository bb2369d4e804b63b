#include "eit/pipeline/gn_reconstructor.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/gn_homogeneous_fit.hpp"

namespace eit::pipeline {
namespace {

const recon::GnSetup& gn_setup(const recon::Model& model) {
  if (!model.gn)
    throw std::invalid_argument(fmt::format(
        "GnReconstructor: model {} is '{}', expected a 'gn' model (eitstream model build "
        "--algorithm gn)",
        model.id, model.algorithm));
  return *model.gn;
}

class HostSolver final : public GnSolver {
 public:
  explicit HostSolver(const recon::Model& model)
      : gn_(model.gn->mesh, model.protocol, model.gn->forward, model.gn->options) {}
  recon::GnResult solve(const Eigen::VectorXd& v, const Eigen::VectorXd& start,
                        int max_iterations) override {
    return gn_.solve(v, start, max_iterations);
  }
  const recon::GnTimings& timings() const noexcept override { return gn_.timings(); }
  bool supports_complex() const noexcept override { return true; }
  recon::GnComplexResult solve_complex(const Eigen::VectorXcd& v, const Eigen::VectorXcd& start,
                                       int max_iterations) override {
    return gn_.solve_complex(v, start, max_iterations);
  }

 private:
  recon::GaussNewton gn_;
};

std::unique_ptr<GnSolver> make_host_solver(const recon::Model& model) {
  gn_setup(model);  // first: HostSolver needs model.gn
  return std::make_unique<HostSolver>(model);
}

}  // namespace

recon::GnComplexResult GnSolver::solve_complex(const Eigen::VectorXcd&, const Eigen::VectorXcd&,
                                               int) {
  throw std::logic_error("gn: this solver has no complex conductivity");
}

GnReconstructor::GnReconstructor(const recon::Model& model, GnReconstructorOptions options)
    : GnReconstructor(model, options, make_host_solver(model), "cpu-gn") {}

GnReconstructor::GnReconstructor(const recon::Model& model, GnReconstructorOptions options,
                                 std::unique_ptr<GnSolver> solver, std::string_view name)
    : solver_(std::move(solver)),
      name_(name),
      options_(options),
      full_iterations_(gn_setup(model).options.max_iterations),
      frame_iterations_(options.frame_iterations < 0 ? model.gn->options.frame_iterations
                                                     : options.frame_iterations),
      complex_(model.gn->options.complex_conductivity),
      n_meas_(model.protocol.n_meas() * (complex_ ? 2 : 1)),
      n_out_(static_cast<size_t>(model.gn->mesh.n_elems()) * (complex_ ? 2 : 1)),
      max_batch_(std::max<size_t>(1, options.max_batch)) {
  if (!solver_) throw std::invalid_argument("GnReconstructor: no solver");
  if (complex_ && !solver_->supports_complex())
    throw std::invalid_argument(fmt::format(
        "{}: model {} has complex conductivity (built with --complex); this solver is real only "
        "(use the CPU one, --backend cpu)",
        name, model.id));
  if (frame_iterations_ < 1)
    throw std::invalid_argument(
        fmt::format("GnReconstructor: frame_iterations = {}, expected ≥ 1", frame_iterations_));
  v_unit_ = recon::ForwardModel(model.gn->mesh, model.protocol, model.gn->forward)
                .solve(Eigen::VectorXd::Ones(model.gn->mesh.n_elems()));
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  counts_.first_fit = {nan, nan, nan, nan};
  v_.resize(static_cast<Eigen::Index>(model.protocol.n_meas()));
  if (complex_) v_c_.resize(static_cast<Eigen::Index>(model.protocol.n_meas()));
  batch_.assign(max_batch_, nullptr);
}

GnReconstructor::~GnReconstructor() = default;

void GnReconstructor::set_reference(std::span<const double> v_ref, bool /*normalize*/) {
  if (v_ref.size() != n_meas_)
    throw std::invalid_argument(
        fmt::format("GnReconstructor: reference has {} values, the model's frames have {}{}",
                    v_ref.size(), n_meas_, complex_ ? " (complex: re, im pairs)" : ""));
}

template <class Vector>
void GnReconstructor::check_fit(const Vector& v) {
  const auto fit = recon::fit_homogeneous(v_unit_, v);
  const bool match = fit.correlation >= kGnMatchCorrelation && std::isfinite(std::abs(fit.sigma));
  counts_.mismatched += !match;
  if (counts_.fitted++ == 0)
    counts_.first_fit = {std::abs(fit.sigma), std::real(fit.scale), fit.correlation, fit.residual};
}

template <class Vector>
bool GnReconstructor::solve_frame(const FrameSlot& f, Vector& sigma) {
  const bool warm = warm_ && options_.warm_start;
  const int iterations = warm ? frame_iterations_ : full_iterations_;
  recon::BasicGnResult<Vector> r;
  try {
    if constexpr (std::is_same_v<Vector, Eigen::VectorXcd>) {
      for (Eigen::Index i = 0; i < v_c_.size(); ++i)
        v_c_(i) = {f.values[2 * i], f.values[2 * i + 1]};
      if (!warm) check_fit(v_c_);
      r = solver_->solve_complex(v_c_, warm ? sigma : Vector(), iterations);
    } else {
      for (Eigen::Index i = 0; i < v_.size(); ++i) v_(i) = f.values[i];
      if (!warm) check_fit(v_);
      r = solver_->solve(v_, warm ? sigma : Vector(), iterations);
    }
  } catch (const std::exception&) {  // e.g. allocation failure: count it like a divergence
    r.status = recon::GnStatus::kDiverged;
    r.sigma = warm ? sigma : Vector();
  }
  counts_.iterations += static_cast<uint64_t>(r.iterations);
  const bool diverged = r.status == recon::GnStatus::kDiverged;
  warm_ = !diverged;
  // The image: the solve's σ (on divergence its last good iterate), or zeros when it has none.
  float* image = f.image;
  const size_t n_e = n_out_ / (complex_ ? 2 : 1);
  if (r.sigma.size() != static_cast<Eigen::Index>(n_e)) {
    std::fill(image, image + n_out_, 0.0f);
  } else if constexpr (std::is_same_v<Vector, Eigen::VectorXcd>) {
    for (size_t e = 0; e < n_e; ++e) {
      image[2 * e] = static_cast<float>(r.sigma(static_cast<Eigen::Index>(e)).real());
      image[2 * e + 1] = static_cast<float>(r.sigma(static_cast<Eigen::Index>(e)).imag());
    }
  } else {
    for (size_t e = 0; e < n_e; ++e)
      image[e] = static_cast<float>(r.sigma(static_cast<Eigen::Index>(e)));
  }
  if (!diverged) sigma = std::move(r.sigma);
  return !diverged;
}

void GnReconstructor::reconstruct(FrameSlot& f) {
  ++counts_.frames;
  bool finite = !(f.flags & kFlagNonFinite);
  for (size_t i = 0; finite && i < n_meas_; ++i) finite = std::isfinite(f.values[i]);
  if (!finite) {
    f.flags |= kFlagNonFinite;
    std::fill(f.image, f.image + n_out_, 0.0f);
    ++counts_.non_finite;
    return;
  }
  if (!(complex_ ? solve_frame(f, sigma_c_) : solve_frame(f, sigma_))) {
    f.flags |= kFlagDiverged;
    ++counts_.diverged;
  }
}

bool GnReconstructor::submit(std::span<FrameSlot* const> batch) {
  if (pending_ > 0 || batch.empty() || batch.size() > max_batch_) return false;
  for (size_t j = 0; j < batch.size(); ++j) {
    reconstruct(*batch[j]);
    batch_[j] = batch[j];
  }
  pending_ = batch.size();
  return true;
}

size_t GnReconstructor::complete(std::span<FrameSlot*> out, bool /*wait*/) {
  const size_t n = std::min(pending_, out.size());
  std::copy_n(batch_.begin(), n, out.begin());
  pending_ = 0;
  return n;
}

}  // namespace eit::pipeline
