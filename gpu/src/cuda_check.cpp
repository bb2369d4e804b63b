#include "cuda_check.hpp"

#include <fmt/format.h>

#include "eit/pipeline/reconstructor.hpp"

namespace eit::gpu {

void check_cuda(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  throw pipeline::BackendError(
      fmt::format("{}: {}: {}", call, cudaGetErrorName(status), cudaGetErrorString(status)));
}

void check_cublas(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw pipeline::BackendError(
      fmt::format("{}: {}: {}", call, cublasGetStatusName(status), cublasGetStatusString(status)));
}

void check_launch(const char* kernel) {
  const cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess) return;
  throw pipeline::BackendError(fmt::format("launch of {}: {}: {}", kernel, cudaGetErrorName(status),
                                           cudaGetErrorString(status)));
}

}  // namespace eit::gpu
