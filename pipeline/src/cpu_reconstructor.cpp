// GCC 12 reports -Wmaybe-uninitialized inside avx512fintrin.h for Eigen's packet code: a known
// false positive in the compiler's own header, silenced for this file only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "eit/pipeline/cpu_reconstructor.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <Eigen/Core>

#include "eit/pipeline/all_finite.hpp"
#include "eit/pipeline/doorbell.hpp"
#include "eit/pipeline/thread_pin.hpp"

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
  // result(r0..r1, 0..cols) = H(r0..r1, :) · dv(:, 0..cols)
  void run(const Eigen::Map<const recon::MatrixRowMajorF>& H, const Eigen::MatrixXf& dv,
           Eigen::MatrixXf& result, Eigen::Index cols, Eigen::Index r0, Eigen::Index r1) {
    result.block(r0, 0, r1 - r0, cols).setZero();
    Kernel::run(r1 - r0, cols, H.cols(), H.data() + r0 * H.cols(), H.cols(), dv.data(), dv.rows(),
                result.data() + r0, 1, result.rows(), 1.0f, blocking, nullptr);
  }
};

// Helper threads: each owns a row range of H and its own GEMM buffers. A batch is published by
// bumping `generation` (release) with its column count; each helper computes its rows and bumps
// `done`; the caller computes the first range meanwhile and then waits for done to reach the
// number of helpers (spinning: a helper's range takes as long as the caller's).
struct CpuReconstructor::Helpers {
  struct Worker {
    std::unique_ptr<Gemm> gemm;
    Eigen::Index r0 = 0, r1 = 0;
    std::thread thread;
  };
  std::vector<Worker> workers;
  Eigen::Index first_rows = 0;  // the caller's range is 0..first_rows
  std::atomic<uint64_t> generation{0};
  std::atomic<uint32_t> done{0};
  std::atomic<bool> quit{false};
  Eigen::Index cols = 0;  // written before generation is bumped
  // Shared by every worker: a batch wakes the sleeping ones with one system call.
  Doorbell bell;

  ~Helpers() {
    quit.store(true, std::memory_order_release);
    generation.fetch_add(1, std::memory_order_release);
    bell.ring();
    for (auto& w : workers)
      if (w.thread.joinable()) w.thread.join();
  }
};

size_t CpuReconstructor::threads() const noexcept {
  return helpers_ ? helpers_->workers.size() + 1 : 1;
}

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
  batch_.assign(max_batch_, nullptr);
  const auto t = static_cast<Eigen::Index>(
      std::clamp<size_t>(options.threads, 1, std::max<Eigen::Index>(1, n / 16)));
  // Row ranges rounded to 16 rows (whole SIMD registers); the caller takes the first.
  const auto range = [&](Eigen::Index k) {
    return std::min<Eigen::Index>(n, ((n * k / t) + 15) / 16 * 16);
  };
  const bool split = t > 1 && max_batch_ > 1;
  gemm_ = std::make_unique<Gemm>(split ? range(1) : n, b, m);
  if (split) {
    helpers_ = std::make_unique<Helpers>();
    Helpers& h = *helpers_;
    h.first_rows = range(1);
    h.workers.resize(static_cast<size_t>(t - 1));
    for (Eigen::Index k = 1; k < t; ++k) {
      auto& w = h.workers[static_cast<size_t>(k - 1)];
      w.r0 = range(k);
      w.r1 = k + 1 == t ? n : range(k + 1);
      w.gemm = std::make_unique<Gemm>(std::max<Eigen::Index>(1, w.r1 - w.r0), b, m);
    }
    for (size_t k = 0; k < h.workers.size(); ++k)
      h.workers[k].thread = std::thread([this, k] {
        name_this_thread("eit-gemm-helper");
        helper_loop(k);
      });
  }
}

void CpuReconstructor::helper_loop(size_t k) noexcept {
  Helpers& h = *helpers_;
  Helpers::Worker& w = h.workers[k];
  uint64_t seen = 0;
  for (;;) {
    const auto ready = [&] { return h.generation.load(std::memory_order_acquire) != seen; };
    while (!wait_until(h.bell, LatencyMode::kBalanced, 50'000,
                       std::numeric_limits<int64_t>::max(), ready)) {
    }
    seen = h.generation.load(std::memory_order_acquire);
    if (h.quit.load(std::memory_order_acquire)) return;
    if (w.r1 > w.r0) w.gemm->run(H_, dv_, result_, h.cols, w.r0, w.r1);
    h.done.fetch_add(1, std::memory_order_acq_rel);
  }
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
    if ((f.flags & kFlagNonFinite) || !all_finite(col.data(), static_cast<size_t>(m))) {
      f.flags |= kFlagNonFinite;
      col.setZero();  // its image is exactly zero and the batch's other images stay intact
    }
    batch_[static_cast<size_t>(j)] = &f;
  }
  const auto n = static_cast<Eigen::Index>(n_out());
  if (b == 1) {
    Eigen::Map<Eigen::VectorXf>(batch[0]->image, n).noalias() = H_ * dv_.col(0);
  } else {
    if (helpers_) {
      Helpers& h = *helpers_;
      h.cols = b;
      h.done.store(0, std::memory_order_relaxed);
      h.generation.fetch_add(1, std::memory_order_release);
      h.bell.ring();
      gemm_->run(H_, dv_, result_, b, 0, h.first_rows);
      const auto helpers = static_cast<uint32_t>(h.workers.size());
      while (h.done.load(std::memory_order_acquire) < helpers) cpu_relax();
    } else {
      gemm_->run(H_, dv_, result_, b, 0, n);
    }
    for (Eigen::Index j = 0; j < b; ++j)
      std::memcpy(batch[static_cast<size_t>(j)]->image, result_.col(j).data(),
                  static_cast<size_t>(n) * sizeof(float));
  }
  pending_ = batch.size();
  return true;
}

bool CpuReconstructor::warms() const noexcept {
  return static_cast<size_t>(H_.size()) * sizeof(float) <= kWarmMaxBytes;
}

void CpuReconstructor::warm() noexcept {
  if (!warms()) return;
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
