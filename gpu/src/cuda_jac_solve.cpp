// JAC's n_meas-sized solve with cuBLAS and cuSOLVER in double (contract:
// eit/gpu/cuda_jac_solve.hpp). Every step is a library call (or the one conversion kernel of
// jac_convert.cu) on the context's stream; buffers are out of place (no reliance on in-place
// DGMM). Eigen matrices are column-major, as cuBLAS expects. The stream is synchronised after
// each part so that JacSolveTimes says where the time went (a few µs each).
#include "eit/gpu/cuda_jac_solve.hpp"

#include <chrono>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "jac_convert.hpp"
#include "jac_solve_context.hpp"
#include "jac_staging.hpp"

namespace eit::gpu {
namespace {

using detail::JacSolveContext;
using Clock = std::chrono::steady_clock;

// Milliseconds since t; t moves to now.
double lap(Clock::time_point& t) {
  const auto now = Clock::now();
  const double ms = std::chrono::duration<double, std::milli>(now - t).count();
  t = now;
  return ms;
}

// cudaMalloc'd doubles (or ints), freed on scope exit.
template <class T>
struct DeviceBuffer {
  T* p = nullptr;
  explicit DeviceBuffer(size_t count) { JAC_CK(cudaMalloc(&p, sizeof(T) * (count ? count : 1))); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

void check_args(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv) {
  const Eigen::Index n_e = jt.rows(), m = jt.cols();
  if (r_inv.size() != n_e)
    throw std::invalid_argument(
        fmt::format("jac cuda: R⁻¹ has {} values, Jᵀ has {} rows", r_inv.size(), n_e));
  if (n_e <= 0 || m <= 0 || n_e > INT_MAX || m > INT_MAX)
    throw std::invalid_argument(
        fmt::format("jac cuda: Jᵀ is {} × {}, expected 1..{} rows and columns", n_e, m, INT_MAX));
}

// One solve's device side: the buffers and the steps up to P = S M⁻¹ (in b, column-major
// n_e × m, with √r_inv in scale); a is free afterwards for the caller's last step.
class DeviceSolve {
 public:
  DeviceSolve(JacSolveContext& c, const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv,
              double lambda, const JacSolveSettings& settings, JacSolveTimes& times,
              Clock::time_point& t)
      : c_(c),
        ne_(static_cast<int>(jt.rows())),
        nm_(static_cast<int>(jt.cols())),
        big_(static_cast<size_t>(jt.rows()) * static_cast<size_t>(jt.cols())),
        small_(static_cast<size_t>(jt.cols()) * static_cast<size_t>(jt.cols())),
        a_(checked(big_, small_, jt)),
        b_(big_),
        scale_(static_cast<size_t>(ne_)),
        mat_(small_),
        inv_(small_),
        info_(1) {
    times.alloc_ms += lap(t);
    upload(jt, r_inv, lambda, settings);
    times.upload_bytes += sizeof(double) * (big_ + static_cast<size_t>(ne_));
    times.upload_ms += lap(t);
    run(times, t);
  }

  double* a() const { return a_.p; }
  const double* b() const { return b_.p; }
  const double* scale() const { return scale_.p; }
  int rows() const { return ne_; }
  int cols() const { return nm_; }
  size_t size() const { return big_; }

 private:
  // Free device memory checked before the first allocation, for a message that says how much.
  static size_t checked(size_t big, size_t small, const Eigen::MatrixXd& jt) {
    const size_t need = sizeof(double) * (2 * big + 2 * small + static_cast<size_t>(jt.rows()));
    size_t free_bytes = 0, total_bytes = 0;
    JAC_CK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (need > free_bytes)
      throw std::runtime_error(fmt::format(
          "jac cuda: Jᵀ {} × {} needs {:.2f} GB of device memory, {:.2f} GB free", jt.rows(),
          jt.cols(), static_cast<double>(need) / 1e9, static_cast<double>(free_bytes) / 1e9));
    return big;
  }

  void upload(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv, double lambda,
              const JacSolveSettings& settings) {
    std::vector<double> host_scale(static_cast<size_t>(ne_));
    for (int e = 0; e < ne_; ++e) host_scale[static_cast<size_t>(e)] = std::sqrt(r_inv(e));
    const std::vector<double> lambdas(static_cast<size_t>(nm_), lambda), ones(lambdas.size(), 1.0);
    JAC_CK(cudaMemcpyAsync(scale_.p, host_scale.data(), sizeof(double) * host_scale.size(),
                           cudaMemcpyHostToDevice, c_.stream));
    // mat = λI and inv = I: zeros, then the diagonal (stride n_meas + 1) from the host vectors.
    const size_t pitch = sizeof(double) * (static_cast<size_t>(nm_) + 1);
    JAC_CK(cudaMemsetAsync(mat_.p, 0, sizeof(double) * small_, c_.stream));
    JAC_CK(cudaMemsetAsync(inv_.p, 0, sizeof(double) * small_, c_.stream));
    JAC_CK(cudaMemcpy2DAsync(mat_.p, pitch, lambdas.data(), sizeof(double), sizeof(double),
                             lambdas.size(), cudaMemcpyHostToDevice, c_.stream));
    JAC_CK(cudaMemcpy2DAsync(inv_.p, pitch, ones.data(), sizeof(double), sizeof(double),
                             ones.size(), cudaMemcpyHostToDevice, c_.stream));
    // Jᵀ into b through the pinned ring; returns with the stream drained (the host vectors
    // above may go out of scope).
    detail::staged_upload(c_, b_.p, jt.data(), sizeof(double) * big_, settings.chunk_bytes);
  }

  void run(JacSolveTimes& times, Clock::time_point& t) {
    // S = diag(√r_inv) Jᵀ;  M = SᵀS + λI (lower triangle).
    JAC_CK(cublasDdgmm(c_.blas, CUBLAS_SIDE_LEFT, ne_, nm_, b_.p, ne_, scale_.p, 1, a_.p, ne_));
    const double one = 1.0, zero = 0.0;
    JAC_CK(cublasDsyrk(c_.blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, nm_, ne_, &one, a_.p, ne_,
                       &one, mat_.p, nm_));
    JAC_CK(cudaStreamSynchronize(c_.stream));
    times.products_ms += lap(t);
    int lwork = 0;
    JAC_CK(
        cusolverDnDpotrf_bufferSize(c_.solver, CUBLAS_FILL_MODE_LOWER, nm_, mat_.p, nm_, &lwork));
    DeviceBuffer<double> work(static_cast<size_t>(lwork));
    JAC_CK(cusolverDnDpotrf(c_.solver, CUBLAS_FILL_MODE_LOWER, nm_, mat_.p, nm_, work.p, lwork,
                            info_.p));
    int host_info = 0;
    JAC_CK(cudaMemcpyAsync(&host_info, info_.p, sizeof(int), cudaMemcpyDeviceToHost, c_.stream));
    JAC_CK(cudaStreamSynchronize(c_.stream));
    if (host_info != 0)
      throw std::runtime_error(fmt::format(
          "jac cuda: J R⁻¹ Jᵀ + λI is not positive definite (DPOTRF info {})", host_info));
    // M⁻¹ from the factor.
    JAC_CK(cusolverDnDpotrs(c_.solver, CUBLAS_FILL_MODE_LOWER, nm_, nm_, mat_.p, nm_, inv_.p, nm_,
                            info_.p));
    JAC_CK(cudaMemcpyAsync(&host_info, info_.p, sizeof(int), cudaMemcpyDeviceToHost, c_.stream));
    JAC_CK(cudaStreamSynchronize(c_.stream));
    if (host_info != 0)
      throw std::runtime_error(fmt::format("jac cuda: DPOTRS info {}", host_info));
    times.solve_ms += lap(t);
    // P = S M⁻¹ into b (Jᵀ is no longer needed).
    JAC_CK(cublasDgemm(c_.blas, CUBLAS_OP_N, CUBLAS_OP_N, ne_, nm_, nm_, &one, a_.p, ne_, inv_.p,
                       nm_, &zero, b_.p, ne_));
    JAC_CK(cudaStreamSynchronize(c_.stream));
    times.products_ms += lap(t);
  }

  JacSolveContext& c_;
  int ne_, nm_;
  size_t big_, small_;
  DeviceBuffer<double> a_, b_, scale_, mat_, inv_;
  DeviceBuffer<int> info_;
};

// Runs `finish(context, device solve, times, t)` after the shared steps and fills *times.
template <class Result, class Finish>
Result solve(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv, double lambda,
             const JacSolveSettings& settings, JacSolveTimes* times_out, Finish finish) {
  check_args(jt, r_inv);
  JacSolveTimes times;
  auto t = Clock::now();
  JacSolveContext& c = detail::jac_solve_context(&times.init_ms);
  std::lock_guard lock(detail::solve_mutex());
  t = Clock::now();
  Result out;
  {
    DeviceSolve d(c, jt, r_inv, lambda, settings, times, t);
    out = finish(c, d, times, t);
    t = Clock::now();
  }
  times.free_ms += lap(t);
  if (times_out) *times_out = times;
  return out;
}

}  // namespace

double cuda_jac_warm_up() {
  double ms = 0;
  detail::jac_solve_context(&ms);
  return ms;
}

Eigen::MatrixXd cuda_jac_diagonal_solve(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv,
                                        double lambda, const JacSolveSettings& settings,
                                        JacSolveTimes* times) {
  return solve<Eigen::MatrixXd>(
      jt, r_inv, lambda, settings, times,
      [&](JacSolveContext& c, const DeviceSolve& d, JacSolveTimes& tm, Clock::time_point& t) {
        // H = diag(√r_inv) · P into a, then down.
        JAC_CK(cublasDdgmm(c.blas, CUBLAS_SIDE_LEFT, d.rows(), d.cols(), d.b(), d.rows(), d.scale(),
                           1, d.a(), d.rows()));
        JAC_CK(cudaStreamSynchronize(c.stream));
        tm.products_ms += lap(t);
        Eigen::MatrixXd out(d.rows(), d.cols());
        detail::staged_download(c, out.data(), d.a(), sizeof(double) * d.size(),
                                settings.chunk_bytes);
        tm.download_bytes += sizeof(double) * d.size();
        tm.download_ms += lap(t);
        return out;
      });
}

recon::MatrixRowMajorF cuda_jac_diagonal_solve_model(const Eigen::MatrixXd& jt,
                                                     const Eigen::VectorXd& r_inv, double lambda,
                                                     const JacSolveSettings& settings,
                                                     JacSolveTimes* times) {
  check_args(jt, r_inv);
  // The result's pages are faulted in on other threads while the device works.
  recon::MatrixRowMajorF out(jt.rows(), jt.cols());
  detail::PageToucher touch(out.data(), sizeof(float) * static_cast<size_t>(out.size()));
  return solve<recon::MatrixRowMajorF>(
      jt, r_inv, lambda, settings, times,
      [&](JacSolveContext& c, const DeviceSolve& d, JacSolveTimes& tm, Clock::time_point& t) {
        // float(−diag(√r_inv) · P), row-major, into a (half of it), then down.
        auto* h = reinterpret_cast<float*>(d.a());
        detail::launch_negated_float_rows(d.b(), d.scale(), h, d.rows(), d.cols(), c.stream);
        JAC_CK(cudaStreamSynchronize(c.stream));
        tm.convert_ms += lap(t);
        touch.join();  // counted in the download
        detail::staged_download(c, out.data(), h, sizeof(float) * d.size(), settings.chunk_bytes);
        tm.download_bytes += sizeof(float) * d.size();
        tm.download_ms += lap(t);
        return std::move(out);
      });
}

}  // namespace eit::gpu
