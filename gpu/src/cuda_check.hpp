#pragma once
// Turning CUDA and cuBLAS return codes into exceptions that name the failing call.
//   EIT_CUDA(cudaMemcpyAsync(...))  → throws pipeline::BackendError("cudaMemcpyAsync(...):
//   <reason>")
// Used on the per-frame path (the stage catches BackendError) and at set-up.
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace eit::gpu {

// Throws pipeline::BackendError("<call>: <CUDA error name>: <description>") unless ok.
void check_cuda(cudaError_t status, const char* call);
void check_cublas(cublasStatus_t status, const char* call);
// After a kernel launch: the launch's own error (bad configuration, too much shared memory).
void check_launch(const char* kernel);

}  // namespace eit::gpu

#define EIT_CUDA(call) ::eit::gpu::check_cuda((call), #call)
#define EIT_CUBLAS(call) ::eit::gpu::check_cublas((call), #call)
