#pragma once
// The JAC solve's process-wide CUDA state (cuda_jac_solve.hpp): one non-blocking stream, the
// cuBLAS and cuSOLVER handles on it, and a ring of pinned staging slots with one event each.
// Made once by jac_solve_context() (first caller creates, concurrent callers wait; a failed
// creation throws and the next call tries again) and never destroyed: tearing CUDA objects down
// in static destructors races the runtime's own exit, and the driver frees them at exit anyway.
// Solves take solve_mutex() for the whole solve (one stream, one ring).
#include <array>
#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "solver_check.hpp"  // JAC_CK(call): std::runtime_error("jac cuda: <call>: <reason>")

namespace eit::gpu::detail {

struct JacSolveContext {
  static constexpr size_t kSlots = 4;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t solver = nullptr;
  std::array<unsigned char*, kSlots> slot{};    // pinned, kJacStagingSlotBytes each, or all null
  std::array<cudaEvent_t, kSlots> slot_free{};  // recorded after the copy that used the slot
};

// The context, created on first use; *created_ms gets the time this call spent creating or
// waiting for it (about 0 when it was there).
JacSolveContext& jac_solve_context(double* created_ms = nullptr);
std::mutex& solve_mutex();

}  // namespace eit::gpu::detail
