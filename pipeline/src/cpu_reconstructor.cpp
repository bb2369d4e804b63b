// GCC 12 reports -Wmaybe-uninitialized inside avx512fintrin.h for Eigen's packet code: a known
// false positive in the compiler's own header, silenced for this file only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "eit/pipeline/cpu_reconstructor.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <Eigen/Core>

namespace eit::pipeline {

// Eigen's `Y.noalias() = H * X` allocates its packing buffers on every call for matrices this
// size. Calling its GEMM kernel directly with a blocking space allocated once keeps the per-frame
// path allocation-free; it is the same kernel the expression would use.
struct CpuReconstructor::Gemm {
  using Blocking =
      Eigen::internal::gemm_blocking_space<Eigen::ColMajor, float, float, Eigen::Dynamic,
                                           Eigen::Dynamic, Eigen::Dynamic, 1, false>;
  using Kernel =
      Eigen::internal::general_matrix_matrix_product<Eigen::Index, float, Eigen::RowMajor, false,
                                                     float, Eigen::ColMajor, false, Eigen::ColMajor,
                                                     1>;
  Blocking blocking;
  Gemm(Eigen::Index rows, Eigen::Index cols, Eigen::Index depth)
      : blocking(rows, cols, depth, 1, true) {
    blocking.allocateAll();
  }
  // result(:, 0..cols) = H · dv(:, 0..cols)
  void run(const Eigen::Map<const recon::MatrixRowMajorF>& H, const Eigen::MatrixXf& dv,
           Eigen::MatrixXf& result, Eigen::Index cols) {
    result.leftCols(cols).setZero();
    Kernel::run(H.rows(), cols, H.cols(), H.data(), H.cols(), dv.data(), dv.rows(), result.data(),
                1, result.rows(), 1.0f, blocking, nullptr);
  }
};

CpuReconstructor::CpuReconstructor(const recon::Model& model, CpuOptions options)
    : CpuReconstructor(model.H, options) {
  if (model.v_ref.size() > 0)
    set_reference({model.v_ref.data(), static_cast<size_t>(model.v_ref.size())}, model.normalize);
}

CpuReconstructor::CpuReconstructor(const recon::MatrixRowMajorF& H, CpuOptions options)
    : H_(H.data(), H.rows(), H.cols()), max_batch_(std::max<size_t>(1, options.max_batch)) {
  if (H.rows() == 0 || H.cols() == 0)
    throw std::invalid_argument(fmt::format(
        "CpuReconstructor: H is {}×{}, expected a non-empty matrix", H.rows(), H.cols()));
  Eigen::setNbThreads(1);
  const auto m = H.cols(), n = H.rows(), b = static_cast<Eigen::Index>(max_batch_);
  v_ref_ = Eigen::VectorXf::Zero(m);
  weight_ = Eigen::VectorXf::Ones(m);
  dv_ = Eigen::MatrixXf::Zero(m, b);
  result_ = Eigen::MatrixXf::Zero(n, b);
  gemm_ = std::make_unique<Gemm>(n, b, m);
  batch_.assign(max_batch_, nullptr);
}

CpuReconstructor::~CpuReconstructor() = default;

void CpuReconstructor::set_reference(std::span<const double> v_ref, bool normalize) {
  if (v_ref.size() != n_meas())
    throw std::invalid_argument(fmt::format(
        "CpuReconstructor: v_ref has {} values, H has {} columns", v_ref.size(), n_meas()));
  for (size_t i = 0; i < v_ref.size(); ++i) {
    if (!std::isfinite(v_ref[i]))
      throw std::invalid_argument(fmt::format("CpuReconstructor: v_ref[{}] is {}", i, v_ref[i]));
    if (normalize && v_ref[i] == 0.0)
      throw std::invalid_argument(
          fmt::format("CpuReconstructor: v_ref[{}] is 0, cannot normalise by |v_ref|", i));
    v_ref_[static_cast<Eigen::Index>(i)] = static_cast<float>(v_ref[i]);
    weight_[static_cast<Eigen::Index>(i)] =
        normalize ? static_cast<float>(1.0 / std::abs(v_ref[i])) : 1.0f;
  }
}

bool CpuReconstructor::submit(std::span<FrameSlot* const> batch) {
  if (pending_ > 0 || batch.empty() || batch.size() > max_batch_) return false;
  const auto m = static_cast<Eigen::Index>(n_meas());
  const auto b = static_cast<Eigen::Index>(batch.size());
  for (Eigen::Index j = 0; j < b; ++j) {
    FrameSlot& f = *batch[static_cast<size_t>(j)];
    auto col = dv_.col(j);
    col = (Eigen::Map<const Eigen::VectorXf>(f.values, m) - v_ref_).cwiseProduct(weight_);
    if ((f.flags & kFlagNonFinite) || !col.allFinite()) {
      f.flags |= kFlagNonFinite;
      col.setZero();  // its image is exactly zero and the batch's other images stay intact
    }
    batch_[static_cast<size_t>(j)] = &f;
  }
  const auto n = static_cast<Eigen::Index>(n_out());
  if (b == 1) {
    Eigen::Map<Eigen::VectorXf>(batch[0]->image, n).noalias() = H_ * dv_.col(0);
  } else {
    gemm_->run(H_, dv_, result_, b);
    for (Eigen::Index j = 0; j < b; ++j)
      std::memcpy(batch[static_cast<size_t>(j)]->image, result_.col(j).data(),
                  static_cast<size_t>(n) * sizeof(float));
  }
  pending_ = batch.size();
  return true;
}

void CpuReconstructor::warm() noexcept {
  const float* p = H_.data();
  const size_t n = static_cast<size_t>(H_.size());
  float sum = 0;
  for (size_t i = 0; i < n; i += 16) sum += p[i];
  for (Eigen::Index i = 0; i < v_ref_.size(); i += 16) sum += v_ref_[i] + weight_[i];
  volatile float sink = sum;  // keeps the loads
  (void)sink;
}

size_t CpuReconstructor::complete(std::span<FrameSlot*> out, bool /*wait*/) {
  const size_t n = std::min(pending_, out.size());
  std::copy_n(batch_.begin(), n, out.begin());
  pending_ = 0;
  return n;
}

}  // namespace eit::pipeline
