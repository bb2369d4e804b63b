// The JAC solve's process-wide CUDA state (jac_solve_context.hpp).
#include "jac_solve_context.hpp"

#include <chrono>

#include <fmt/format.h>

#include "eit/gpu/cuda_jac_solve.hpp"

namespace eit::gpu::detail {

namespace {

// Everything or nothing: on a failure the parts made so far are released before the throw.
JacSolveContext* create() {
  struct Partial {
    JacSolveContext c;
    bool keep = false;
    ~Partial() {
      if (keep) return;
      for (auto& e : c.slot_free)
        if (e) cudaEventDestroy(e);
      for (auto* p : c.slot)
        if (p) cudaFreeHost(p);
      if (c.solver) cusolverDnDestroy(c.solver);
      if (c.blas) cublasDestroy(c.blas);
      if (c.stream) cudaStreamDestroy(c.stream);
    }
  } p;
  int count = 0;
  JAC_CK(cudaGetDeviceCount(&count));
  if (count == 0) throw std::runtime_error("jac cuda: cudaGetDeviceCount found 0 devices");
  JAC_CK(cudaFree(nullptr));  // the primary context, now rather than inside the first call
  JAC_CK(cudaStreamCreateWithFlags(&p.c.stream, cudaStreamNonBlocking));
  JAC_CK(cublasCreate(&p.c.blas));
  JAC_CK(cublasSetStream(p.c.blas, p.c.stream));
  JAC_CK(cusolverDnCreate(&p.c.solver));
  JAC_CK(cusolverDnSetStream(p.c.solver, p.c.stream));
  for (size_t i = 0; i < JacSolveContext::kSlots; ++i)
    JAC_CK(cudaEventCreateWithFlags(&p.c.slot_free[i], cudaEventDisableTiming));
  // Pinned memory may be refused (a locked-memory limit): then the copies go through pageable
  // memory as the driver stages it, slower but not an error.
  for (size_t i = 0; i < JacSolveContext::kSlots; ++i) {
    if (cudaHostAlloc(reinterpret_cast<void**>(&p.c.slot[i]), kJacStagingSlotBytes,
                      cudaHostAllocDefault) == cudaSuccess)
      continue;
    cudaGetLastError();  // clear it
    for (auto*& slot : p.c.slot) {
      if (slot) cudaFreeHost(slot);
      slot = nullptr;
    }
    break;
  }
  p.keep = true;
  return new JacSolveContext(p.c);  // never deleted (see the header)
}

std::mutex g_create_mutex;
JacSolveContext* g_context = nullptr;  // written under g_create_mutex

}  // namespace

JacSolveContext& jac_solve_context(double* created_ms) {
  const auto t0 = std::chrono::steady_clock::now();
  std::lock_guard lock(g_create_mutex);
  if (!g_context) g_context = create();
  if (created_ms)  // creating, or waiting for another thread's creation; ~0 when warm
    *created_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return *g_context;
}

std::mutex& solve_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace eit::gpu::detail
