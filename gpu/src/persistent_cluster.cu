// The one-cluster persistent kernel (protocol in persistent_kernel.hpp): block 0 waits for the
// frame and computes dv into its shared memory; the other blocks of the cluster read it there
// through distributed shared memory. No device-memory relay, no grid-wide counter: each block
// reports its own rows to the host. H200, 1024×208, bench_cuda: p50 7.3 µs against 12.6 for the
// relay kernel with the same LL entry (docs/gpu-notes.md, run 13).
#include <cooperative_groups.h>

#include "cuda_check.hpp"
#include "persistent_kernel.hpp"
#include "persistent_wait.cuh"

namespace eit::gpu {
namespace {

namespace cg = cooperative_groups;

template <typename T>
__global__ void __launch_bounds__(kThreads) persistent_cluster_kernel(PersistentParams p) {
  extern __shared__ float4 smem4[];
  float* s_dv = reinterpret_cast<float*>(smem4);
  float* s_out = s_dv + p.model.ld;
  // Block 0's copies are the ones every block reads.
  __shared__ int s_cmd;
  __shared__ PostedImage s_post;
  __shared__ uint32_t s_bad;
  const cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  const DeviceModel& m = p.model;
  const int r0 = static_cast<int>(rank) * p.rows_per_block;
  const int r1 = min(m.n_out, r0 + p.rows_per_block);
  IdleClock clock{global_ns()};  // block 0, thread 0 only

  for (uint64_t seq = p.start_seq;; ++seq) {
    if (rank == 0) {
      bool bad = false;
      const int cmd = block_wait_frame(p, seq, clock, s_dv, s_post, s_cmd, bad);
      if (threadIdx.x == 0) {
        s_cmd = cmd;
        s_bad = bad ? 1u : 0u;
      }
    }
    cluster.sync();  // block 0's frame (or exit) is visible to the cluster
    if (*cluster.map_shared_rank(&s_cmd, 0) == kExit) {
      cluster.sync();  // block 0's shared memory must outlive every read of it
      return;
    }
    const bool bad = *cluster.map_shared_rank(&s_bad, 0) != 0;
    float* const image = cluster.map_shared_rank(&s_post, 0)->image;
    if (rank != 0 && !bad) {
      const float4* dv0 = cluster.map_shared_rank(smem4, 0);
      for (int i = threadIdx.x; i < m.ld / 4; i += blockDim.x) smem4[i] = dv0[i];
    }
    __syncthreads();
    if (r0 < r1) {
      if (!bad) block_rows_ilp<T>(m, s_dv, r0, r1, s_out);
      __syncthreads();
      block_store(image, r0, r1, s_out, bad);
    }
    __threadfence_system();  // this thread's image stores reach the host before the done word
    __syncthreads();
    if (threadIdx.x == 0) {
      if (rank == 0) {
        p.mailbox->done[seq % kRing] = 2 * seq + (bad ? 1u : 0u);
        __threadfence_system();
        p.mailbox->done_seq = seq;
      } else {
        p.mailbox->block_done[rank] = seq;
      }
    }
    cluster.sync();  // block 0 rewrites dv and s_post next round only after every block read them
  }
}

template <typename T>
cudaLaunchConfig_t cluster_config(int blocks, size_t smem, cudaStream_t stream,
                                  cudaLaunchAttribute& attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = blocks;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cfg;
}

}  // namespace

void launch_persistent_cluster(Precision p, const PersistentParams& params, int blocks,
                               cudaStream_t stream) {
  const size_t smem = persistent_smem_bytes(params.model, params.rows_per_block);
  dispatch_precision(p, [&](auto t) {
    using T = decltype(t);
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_config<T>(blocks, smem, stream, attr);
    EIT_CUDA(cudaLaunchKernelEx(&cfg, persistent_cluster_kernel<T>, params));
  });
}

bool prepare_persistent_cluster(Precision p, int blocks, size_t smem) {
  int device = 0, major = 0;
  EIT_CUDA(cudaGetDevice(&device));
  EIT_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 9 || blocks < 1 || blocks > kMaxClusterBlocks) return false;
  bool fits = false;
  dispatch_precision(p, [&](auto t) {
    using T = decltype(t);
    const auto kernel = persistent_cluster_kernel<T>;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(smem)) != cudaSuccess ||
        cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) !=
            cudaSuccess)
      return;
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_config<T>(blocks, smem, nullptr, attr);
    int clusters = 0;
    fits = cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) == cudaSuccess && clusters >= 1;
  });
  cudaGetLastError();  // an unsupported size is an answer here, not a sticky error
  return fits;
}

}  // namespace eit::gpu
