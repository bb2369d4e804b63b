// JAC's n_meas-sized solve with cuBLAS and cuSOLVER in double (contract:
// eit/gpu/cuda_jac_solve.hpp). Host code only: every step is a library call on one stream; buffers
// are out of place (no reliance on in-place DGMM). Eigen matrices are column-major, as cuBLAS
// expects.
#include "eit/gpu/cuda_jac_solve.hpp"

#include <climits>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/format.h>

namespace eit::gpu {
namespace {

void ok(cudaError_t s, const char* call) {
  if (s != cudaSuccess)
    throw std::runtime_error(fmt::format("jac cuda: {}: {}", call, cudaGetErrorString(s)));
}
void ok(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(fmt::format("jac cuda: {}: {}", call, cublasGetStatusString(s)));
}
void ok(cusolverStatus_t s, const char* call) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    throw std::runtime_error(fmt::format("jac cuda: {}: cuSOLVER status {}", call, int(s)));
}
#define JAC_CK(call) ok((call), #call)

// cudaMalloc'd doubles (or ints), freed on scope exit.
template <class T>
struct DeviceBuffer {
  T* p = nullptr;
  explicit DeviceBuffer(size_t count) { JAC_CK(cudaMalloc(&p, sizeof(T) * (count ? count : 1))); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Handles {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t solver = nullptr;
  Handles() {
    JAC_CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    JAC_CK(cublasCreate(&blas));
    JAC_CK(cublasSetStream(blas, stream));
    JAC_CK(cusolverDnCreate(&solver));
    JAC_CK(cusolverDnSetStream(solver, stream));
  }
  ~Handles() {
    if (solver) cusolverDnDestroy(solver);
    if (blas) cublasDestroy(blas);
    if (stream) cudaStreamDestroy(stream);
  }
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
};

}  // namespace

Eigen::MatrixXd cuda_jac_diagonal_solve(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv,
                                        double lambda) {
  const Eigen::Index n_e = jt.rows(), m = jt.cols();
  if (r_inv.size() != n_e)
    throw std::invalid_argument(
        fmt::format("jac cuda: R⁻¹ has {} values, Jᵀ has {} rows", r_inv.size(), n_e));
  if (n_e <= 0 || m <= 0 || n_e > INT_MAX || m > INT_MAX)
    throw std::invalid_argument(
        fmt::format("jac cuda: Jᵀ is {} × {}, expected 1..{} rows and columns", n_e, m, INT_MAX));
  const size_t big = static_cast<size_t>(n_e) * static_cast<size_t>(m);
  const size_t small = static_cast<size_t>(m) * static_cast<size_t>(m);
  const size_t need = sizeof(double) * (2 * big + 2 * small + static_cast<size_t>(n_e));
  size_t free_bytes = 0, total_bytes = 0;
  JAC_CK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need > free_bytes)
    throw std::runtime_error(
        fmt::format("jac cuda: Jᵀ {} × {} needs {:.2f} GB of device memory, {:.2f} GB free", n_e, m,
                    static_cast<double>(need) / 1e9, static_cast<double>(free_bytes) / 1e9));

  const int ne = static_cast<int>(n_e), nm = static_cast<int>(m);
  Handles h;
  DeviceBuffer<double> a(big), b(big), scale(static_cast<size_t>(n_e)), mat(small), inv(small);
  DeviceBuffer<int> info(1);
  std::vector<double> host_scale(static_cast<size_t>(n_e));
  for (Eigen::Index e = 0; e < n_e; ++e) host_scale[static_cast<size_t>(e)] = std::sqrt(r_inv(e));
  const Eigen::MatrixXd lambda_i = Eigen::MatrixXd::Identity(m, m) * lambda;
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(m, m);

  JAC_CK(cudaMemcpyAsync(b.p, jt.data(), sizeof(double) * big, cudaMemcpyHostToDevice, h.stream));
  JAC_CK(cudaMemcpyAsync(scale.p, host_scale.data(), sizeof(double) * host_scale.size(),
                         cudaMemcpyHostToDevice, h.stream));
  JAC_CK(cudaMemcpyAsync(mat.p, lambda_i.data(), sizeof(double) * small, cudaMemcpyHostToDevice,
                         h.stream));
  JAC_CK(cudaMemcpyAsync(inv.p, identity.data(), sizeof(double) * small, cudaMemcpyHostToDevice,
                         h.stream));
  // S = diag(√r_inv) Jᵀ;  M = SᵀS + λI (lower triangle).
  JAC_CK(cublasDdgmm(h.blas, CUBLAS_SIDE_LEFT, ne, nm, b.p, ne, scale.p, 1, a.p, ne));
  const double one = 1.0, zero = 0.0;
  JAC_CK(cublasDsyrk(h.blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, nm, ne, &one, a.p, ne, &one,
                     mat.p, nm));
  int lwork = 0;
  JAC_CK(cusolverDnDpotrf_bufferSize(h.solver, CUBLAS_FILL_MODE_LOWER, nm, mat.p, nm, &lwork));
  DeviceBuffer<double> work(static_cast<size_t>(lwork));
  JAC_CK(cusolverDnDpotrf(h.solver, CUBLAS_FILL_MODE_LOWER, nm, mat.p, nm, work.p, lwork, info.p));
  int host_info = 0;
  JAC_CK(cudaMemcpyAsync(&host_info, info.p, sizeof(int), cudaMemcpyDeviceToHost, h.stream));
  JAC_CK(cudaStreamSynchronize(h.stream));
  if (host_info != 0)
    throw std::runtime_error(fmt::format(
        "jac cuda: J R⁻¹ Jᵀ + λI is not positive definite (DPOTRF info {})", host_info));
  // M⁻¹ from the factor, then H = diag(√r_inv) · S M⁻¹.
  JAC_CK(cusolverDnDpotrs(h.solver, CUBLAS_FILL_MODE_LOWER, nm, nm, mat.p, nm, inv.p, nm, info.p));
  JAC_CK(cublasDgemm(h.blas, CUBLAS_OP_N, CUBLAS_OP_N, ne, nm, nm, &one, a.p, ne, inv.p, nm, &zero,
                     b.p, ne));
  JAC_CK(cublasDdgmm(h.blas, CUBLAS_SIDE_LEFT, ne, nm, b.p, ne, scale.p, 1, a.p, ne));
  Eigen::MatrixXd out(n_e, m);
  JAC_CK(cudaMemcpyAsync(out.data(), a.p, sizeof(double) * big, cudaMemcpyDeviceToHost, h.stream));
  JAC_CK(cudaMemcpyAsync(&host_info, info.p, sizeof(int), cudaMemcpyDeviceToHost, h.stream));
  JAC_CK(cudaStreamSynchronize(h.stream));
  if (host_info != 0) throw std::runtime_error(fmt::format("jac cuda: DPOTRS info {}", host_info));
  return out;
}

}  // namespace eit::gpu
