#pragma once
// CUDA, cuBLAS and cuSOLVER status codes as std::runtime_error("<who> cuda: <call>: <reason>"),
// for the solvers whose callers take runtime_error: the JAC matrix solve (JAC_CK) and
// Gauss–Newton (GN_CK). The per-frame backend uses cuda_check.hpp (pipeline::BackendError).
// Header-only: the Gauss–Newton library links nothing of eit_gpu.
#include <stdexcept>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/format.h>

namespace eit::gpu::detail {

inline void solver_ok(cudaError_t s, const char* who, const char* call) {
  if (s != cudaSuccess)
    throw std::runtime_error(fmt::format("{} cuda: {}: {}", who, call, cudaGetErrorString(s)));
}
inline void solver_ok(cublasStatus_t s, const char* who, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(fmt::format("{} cuda: {}: {}", who, call, cublasGetStatusString(s)));
}
inline void solver_ok(cusolverStatus_t s, const char* who, const char* call) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    throw std::runtime_error(
        fmt::format("{} cuda: {}: cuSOLVER status {}", who, call, static_cast<int>(s)));
}

}  // namespace eit::gpu::detail

#define JAC_CK(call) ::eit::gpu::detail::solver_ok((call), "jac", #call)
#define GN_CK(call) ::eit::gpu::detail::solver_ok((call), "gn", #call)
