// The relay persistent kernel and the launchers (protocol in persistent_kernel.hpp).
#include "cuda_check.hpp"
#include "persistent_kernel.hpp"
#include "persistent_wait.cuh"

namespace eit::gpu {
namespace {

// Thread 0 of blocks other than 0: waits until frame `seq` (or the exit) is relayed.
__device__ uint64_t wait_for_relay(const PersistentParams& p, uint64_t seq) {
  volatile uint64_t* relay = &p.state->relay_seq;
  const long long t0 = global_ns();
  unsigned sleep_ns = 0;
  for (;;) {
    const uint64_t r = *relay;
    if (r >= seq) return r;
    idle_pause(global_ns() - t0, p.hot_ns, sleep_ns);
  }
}

__device__ void wait_done(const PersistentParams& p, uint64_t seq) {
  volatile uint64_t* done = &p.state->done_seq;
  while (*done < seq) {
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) persistent_kernel(PersistentParams p) {
  extern __shared__ float4 smem4[];
  float* s_dv = reinterpret_cast<float*>(smem4);
  float* s_out = s_dv + p.model.ld;
  __shared__ int s_cmd;
  __shared__ PostedImage s_post;
  __shared__ uint32_t s_bad;
  const DeviceModel& m = p.model;
  const int r0 = blockIdx.x * p.rows_per_block;
  const int r1 = min(m.n_out, r0 + p.rows_per_block);
  IdleClock clock{global_ns()};  // block 0, thread 0 only

  for (uint64_t seq = p.start_seq;; ++seq) {
    bool bad;
    if (blockIdx.x == 0) {
      if (block_wait_frame(p, seq, clock, s_dv, s_post, s_cmd, bad) == kExit) {
        if (threadIdx.x == 0) {
          wait_done(p, seq - 1);  // nobody may still be reading the previous relay
          *reinterpret_cast<volatile uint64_t*>(&p.state->relay_seq) = kExitSeq;
        }
        return;
      }
      float* dv = p.dv + (seq & 1) * m.ld;
      for (int i = threadIdx.x; i < m.ld / 4; i += blockDim.x)
        __stcg(reinterpret_cast<float4*>(dv) + i, reinterpret_cast<const float4*>(s_dv)[i]);
      __threadfence();
      __syncthreads();
      if (threadIdx.x == 0) {
        wait_done(p, seq - 1);
        p.state->relay_image = s_post.image;
        p.state->relay_bad = bad ? 1u : 0u;
        __threadfence();
        *reinterpret_cast<volatile uint64_t*>(&p.state->relay_seq) = seq;
      }
    } else {
      if (threadIdx.x == 0) {
        const uint64_t r = wait_for_relay(p, seq);
        s_cmd = r == kExitSeq ? kExit : kRun;
        __threadfence();
        s_post.image = *reinterpret_cast<float* volatile*>(&p.state->relay_image);
        s_bad = *reinterpret_cast<volatile uint32_t*>(&p.state->relay_bad);
      }
      __syncthreads();
      if (s_cmd == kExit) return;
      bad = s_bad != 0;
      if (!bad) {
        const float4* dv = reinterpret_cast<const float4*>(p.dv + (seq & 1) * m.ld);
        for (int i = threadIdx.x; i < m.ld / 4; i += blockDim.x)
          reinterpret_cast<float4*>(s_dv)[i] = __ldcg(dv + i);
      }
      __syncthreads();
    }
    if (r0 < r1) {
      if (!bad) block_rows_ilp<T>(m, s_dv, r0, r1, s_out);
      __syncthreads();
      block_store(s_post.image, r0, r1, s_out, bad);
    }
    __threadfence_system();  // this thread's image stores reach the host before the done flag
    __syncthreads();
    if (threadIdx.x == 0) {
      if (atomicAdd(&p.state->arrive, 1u) == gridDim.x - 1) {
        __threadfence();
        *reinterpret_cast<volatile uint32_t*>(&p.state->arrive) = 0;
        p.mailbox->done[seq % kRing] = 2 * seq + (bad ? 1u : 0u);
        __threadfence_system();
        p.mailbox->done_seq = seq;
        __threadfence();
        *reinterpret_cast<volatile uint64_t*>(&p.state->done_seq) = seq;
      }
    }
    // s_post / s_bad are rewritten next round only after this barrier.
    __syncthreads();
  }
}

}  // namespace

size_t persistent_smem_bytes(const DeviceModel& m, int rows_per_block) {
  return (m.ld + rows_per_block) * sizeof(float);
}

void launch_persistent(Precision p, const PersistentParams& params, int blocks,
                       cudaStream_t stream) {
  const size_t smem = persistent_smem_bytes(params.model, params.rows_per_block);
  dispatch_precision(p, [&](auto t) {
    persistent_kernel<decltype(t)><<<blocks, kThreads, smem, stream>>>(params);
  });
  check_launch("persistent_kernel");
}

void set_persistent_smem_limit(size_t bytes) {
  constexpr auto kAttr = cudaFuncAttributeMaxDynamicSharedMemorySize;
  const int b = static_cast<int>(bytes);
  EIT_CUDA(cudaFuncSetAttribute(persistent_kernel<float>, kAttr, b));
  EIT_CUDA(cudaFuncSetAttribute(persistent_kernel<__nv_bfloat16>, kAttr, b));
  EIT_CUDA(cudaFuncSetAttribute(persistent_kernel<__half>, kAttr, b));
}

}  // namespace eit::gpu
