#include "eit/pipeline/gn_reconstructor.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <stdexcept>

#include <fmt/format.h>

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

 private:
  recon::GaussNewton gn_;
};

std::unique_ptr<GnSolver> make_host_solver(const recon::Model& model) {
  gn_setup(model);  // first: HostSolver needs model.gn
  return std::make_unique<HostSolver>(model);
}

}  // namespace

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
      n_meas_(model.protocol.n_meas()),
      n_out_(static_cast<size_t>(model.gn->mesh.n_elems())),
      max_batch_(std::max<size_t>(1, options.max_batch)) {
  if (!solver_) throw std::invalid_argument("GnReconstructor: no solver");
  if (frame_iterations_ < 1)
    throw std::invalid_argument(
        fmt::format("GnReconstructor: frame_iterations = {}, expected ≥ 1", frame_iterations_));
  v_.resize(static_cast<Eigen::Index>(n_meas_));
  batch_.assign(max_batch_, nullptr);
}

GnReconstructor::~GnReconstructor() = default;

void GnReconstructor::set_reference(std::span<const double> v_ref, bool /*normalize*/) {
  if (v_ref.size() != n_meas_)
    throw std::invalid_argument(
        fmt::format("GnReconstructor: reference has {} values, the model has {} measurements",
                    v_ref.size(), n_meas_));
}

void GnReconstructor::reconstruct(FrameSlot& f) {
  ++counts_.frames;
  float* image = f.image;
  bool finite = !(f.flags & kFlagNonFinite);
  for (size_t i = 0; finite && i < n_meas_; ++i) finite = std::isfinite(f.values[i]);
  if (!finite) {
    f.flags |= kFlagNonFinite;
    std::fill(image, image + n_out_, 0.0f);
    ++counts_.non_finite;
    return;
  }
  for (size_t i = 0; i < n_meas_; ++i) v_(static_cast<Eigen::Index>(i)) = f.values[i];
  const bool warm = warm_ && options_.warm_start;
  recon::GnResult r;
  try {
    r = solver_->solve(v_, warm ? sigma_ : Eigen::VectorXd(),
                       warm ? frame_iterations_ : full_iterations_);
  } catch (const std::exception&) {  // e.g. allocation failure: count it like a divergence
    r.status = recon::GnStatus::kDiverged;
    r.sigma = warm ? sigma_ : Eigen::VectorXd();
  }
  counts_.iterations += static_cast<uint64_t>(r.iterations);
  if (r.status == recon::GnStatus::kDiverged) {
    f.flags |= kFlagDiverged;
    ++counts_.diverged;
    warm_ = false;
  } else {
    sigma_ = r.sigma;
    warm_ = true;
  }
  if (r.sigma.size() == static_cast<Eigen::Index>(n_out_))
    for (size_t e = 0; e < n_out_; ++e)
      image[e] = static_cast<float>(r.sigma(static_cast<Eigen::Index>(e)));
  else
    std::fill(image, image + n_out_, 0.0f);
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
