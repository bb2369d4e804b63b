// The launched path's kernels: single-frame fused kernel, batch prepare (gather, subtract the
// reference, normalise, detect non-finite), rows-only GEMV, scatter to the slots, H conversion.
#include "frame_kernels.hpp"

#include <algorithm>

#include "cuda_check.hpp"
#include "device_layout.cuh"

namespace eit::gpu {
namespace {

template <typename T>
__global__ void __launch_bounds__(kThreads)
    single_frame_kernel(DeviceModel m, FrameDesc f, int rpb, uint32_t* status, Completion c) {
  extern __shared__ float4 smem4[];
  float* s_dv = reinterpret_cast<float*>(smem4);
  float* s_out = s_dv + m.ld;
  const bool bad = block_prepare(m, f.values, f.flags & kBadFrame, s_dv);
  const int r0 = blockIdx.x * rpb, r1 = min(m.n_out, r0 + rpb);
  if (!bad) block_rows<T>(m, s_dv, r0, r1, s_out);
  __syncthreads();
  block_store(f.image, r0, r1, s_out, bad);
  if (blockIdx.x == 0 && threadIdx.x == 0) *status = bad ? 1u : 0u;
  arrive_and_signal(c);
}

__device__ __forceinline__ FrameDesc load_desc(const FrameDesc* d) {
  // Descriptors live in mapped host memory rewritten between launches: never cached.
  const ulonglong2 a = __ldcv(reinterpret_cast<const ulonglong2*>(d));
  const uint2 b = __ldcv(reinterpret_cast<const uint2*>(d) + 2);
  FrameDesc f;
  f.values = reinterpret_cast<const float*>(a.x);
  f.image = reinterpret_cast<float*>(a.y);
  f.flags = b.x;
  f.pad = 0;
  return f;
}

__device__ __forceinline__ float* load_address(float* const* p) {
  return reinterpret_cast<float*>(__ldcg(reinterpret_cast<const unsigned long long*>(p)));
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    prepare_kernel(DeviceModel m, const FrameDesc* descs, const float* staged, int staged_pitch,
                   T* dv, uint32_t* status, float** images) {
  extern __shared__ float4 smem4[];
  float* s_dv = reinterpret_cast<float*>(smem4);
  __shared__ FrameDesc s_f;
  if (threadIdx.x == 0) {
    s_f = load_desc(descs + blockIdx.x);
    images[blockIdx.x] = s_f.image;  // device copy: later kernels' blocks need not cross PCIe
  }
  __syncthreads();
  const float* values =
      staged ? staged + static_cast<size_t>(blockIdx.x) * staged_pitch : s_f.values;
  const bool bad = block_prepare(m, values, s_f.flags & kBadFrame, s_dv);
  T* out = dv + static_cast<size_t>(blockIdx.x) * m.ld;
  for (int i = threadIdx.x; i < m.ld; i += blockDim.x) out[i] = from_float<T>(bad ? 0.f : s_dv[i]);
  // Only a bad frame writes its status word (the host zeroed them): one small PCIe write and a
  // system fence per frame, interleaved with the images coming down, cost the copy engine time.
  if (bad && threadIdx.x == 0) {
    status[blockIdx.x] = 1u;
    __threadfence_system();
  }
}

__global__ void __launch_bounds__(kThreads)
    prepare_one_kernel(DeviceModel m, FrameDesc f, float* dv, uint32_t* status) {
  extern __shared__ float4 smem4[];
  float* s_dv = reinterpret_cast<float*>(smem4);
  const bool bad = block_prepare(m, f.values, f.flags & kBadFrame, s_dv);
  for (int i = threadIdx.x; i < m.ld; i += blockDim.x) dv[i] = bad ? 0.f : s_dv[i];
  if (threadIdx.x == 0) *status = bad ? 1u : 0u;
  __threadfence_system();
}

// One frame's image rows = H · dv (dv float32 in device memory), kRowsPerWarp rows per warp at
// a time (4: block_rows; 8: block_rows_ilp, twice the loads in flight). The register caps keep
// 4 blocks per SM (64 registers) and 2 (≤ 128) respectively.
template <typename T, int kRowsPerWarp>
__global__ void __launch_bounds__(kThreads, kRowsPerWarp == 8 ? 2 : 4)
    rows_kernel(DeviceModel m, const float* dv, float* image, int rpb, Completion c) {
  extern __shared__ float4 smem4[];
  float* s_dv = reinterpret_cast<float*>(smem4);
  float* s_out = s_dv + m.ld;
  const int r0 = blockIdx.x * rpb, r1 = min(m.n_out, r0 + rpb);
  for (int i = threadIdx.x; i < m.ld / 4; i += blockDim.x)
    reinterpret_cast<float4*>(s_dv)[i] = __ldcg(reinterpret_cast<const float4*>(dv) + i);
  __syncthreads();
  if constexpr (kRowsPerWarp == 8)
    block_rows_ilp<T>(m, s_dv, r0, r1, s_out);
  else
    block_rows<T>(m, s_dv, r0, r1, s_out);
  __syncthreads();
  block_store(image, r0, r1, s_out, false);
  arrive_and_signal(c);
}

// Batch without cuBLAS: block (x, y) computes row chunk x of frame y from dv (float32, ld per
// frame) and writes it straight into that frame's image.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    batch_rows_kernel(DeviceModel m, const float* dv, float* const* images, int rpb, Completion c) {
  extern __shared__ float4 smem4[];
  float* s_dv = reinterpret_cast<float*>(smem4);
  float* s_out = s_dv + m.ld;
  __shared__ float* s_image;
  if (threadIdx.x == 0) s_image = load_address(images + blockIdx.y);
  const float4* src = reinterpret_cast<const float4*>(dv + static_cast<size_t>(blockIdx.y) * m.ld);
  for (int i = threadIdx.x; i < m.ld / 4; i += blockDim.x)
    reinterpret_cast<float4*>(s_dv)[i] = __ldcg(src + i);
  __syncthreads();
  const int r0 = blockIdx.x * rpb, r1 = min(m.n_out, r0 + rpb);
  block_rows<T>(m, s_dv, r0, r1, s_out);
  __syncthreads();
  block_store(s_image, r0, r1, s_out, false);
  arrive_and_signal(c);
}

__global__ void scatter_kernel(const float* img, int n_out, int ld_img, float* const* images,
                               Completion c) {
  __shared__ float* s_dst;
  if (threadIdx.x == 0) s_dst = load_address(images + blockIdx.y);
  __syncthreads();
  float* dst = s_dst;
  const float* src = img + static_cast<size_t>(blockIdx.y) * ld_img;
  const int stride = gridDim.x * blockDim.x;
  int start = 0;
  if (reinterpret_cast<uintptr_t>(dst) % 16 == 0 && ld_img % 4 == 0) {
    const int n4 = n_out / 4;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride)
      reinterpret_cast<float4*>(dst)[i] = __ldcs(reinterpret_cast<const float4*>(src) + i);
    start = 4 * n4;
  }
  for (int i = start + blockIdx.x * blockDim.x + threadIdx.x; i < n_out; i += stride)
    dst[i] = src[i];
  arrive_and_signal(c);
}

__global__ void signal_kernel(Completion c) { arrive_and_signal(c); }

template <typename T>
__global__ void convert_rows_kernel(const float* src, int rows, int n_meas, T* dst, int ld) {
  const size_t total = static_cast<size_t>(rows) * ld;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t r = i / ld, c = i % ld;
    dst[i] = from_float<T>(c < static_cast<size_t>(n_meas) ? src[r * n_meas + c] : 0.f);
  }
}

size_t smem_dv_out(const DeviceModel& m, int rpb) { return (m.ld + rpb) * sizeof(float); }

}  // namespace

size_t element_bytes(Precision p) { return p == kFloat32 ? 4 : 2; }

void launch_single_frame(Precision p, const DeviceModel& m, const FrameDesc& f, int blocks,
                         uint32_t* status, const Completion& c, cudaStream_t stream) {
  const int rpb = rows_per_block(m.n_out, blocks);
  const int grid = (m.n_out + rpb - 1) / rpb;
  dispatch_precision(p, [&](auto t) {
    single_frame_kernel<decltype(t)>
        <<<grid, kThreads, smem_dv_out(m, rpb), stream>>>(m, f, rpb, status, c);
  });
  check_launch("single_frame_kernel");
}

void launch_prepare(Precision p, const DeviceModel& m, const FrameDesc* descs, int batch, void* dv,
                    uint32_t* status, float** images, cudaStream_t stream, const float* staged,
                    int staged_pitch) {
  dispatch_precision(p, [&](auto t) {  // p: the element type of dv
    using T = decltype(t);
    prepare_kernel<T><<<batch, kThreads, m.ld * sizeof(float), stream>>>(
        m, descs, staged, staged_pitch, static_cast<T*>(dv), status, images);
  });
  check_launch("prepare_kernel");
}

void launch_prepare_one(const DeviceModel& m, const FrameDesc& f, float* dv, uint32_t* status,
                        cudaStream_t stream) {
  prepare_one_kernel<<<1, kThreads, m.ld * sizeof(float), stream>>>(m, f, dv, status);
  check_launch("prepare_one_kernel");
}

void launch_rows(Precision p, const DeviceModel& m, const float* dv, float* image,
                 const RowsShape& shape, const Completion& c, cudaStream_t stream) {
  const int rpb = rows_per_block(m.n_out, shape.blocks);
  const int grid = (m.n_out + rpb - 1) / rpb;
  const size_t smem = smem_dv_out(m, rpb);
  dispatch_precision(p, [&](auto t) {
    using T = decltype(t);
    if (shape.rows_per_warp == 8)
      rows_kernel<T, 8><<<grid, kThreads, smem, stream>>>(m, dv, image, rpb, c);
    else
      rows_kernel<T, 4><<<grid, kThreads, smem, stream>>>(m, dv, image, rpb, c);
  });
  check_launch("rows_kernel");
}

int rows_kernel_blocks_per_sm(Precision p, int rows_per_warp, size_t smem) {
  int n = 0;
  dispatch_precision(p, [&](auto t) {
    using T = decltype(t);
    EIT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &n, rows_per_warp == 8 ? rows_kernel<T, 8> : rows_kernel<T, 4>, kThreads, smem));
  });
  return std::max(n, 1);
}

void launch_batch_rows(Precision p, const DeviceModel& m, const float* dv, float* const* images,
                       int batch, int blocks, const Completion& c, cudaStream_t stream) {
  const int rpb = rows_per_block(m.n_out, blocks);
  const int grid = (m.n_out + rpb - 1) / rpb;
  dispatch_precision(p, [&](auto t) {
    batch_rows_kernel<decltype(t)>
        <<<dim3(grid, batch), kThreads, smem_dv_out(m, rpb), stream>>>(m, dv, images, rpb, c);
  });
  check_launch("batch_rows_kernel");
}

void launch_scatter(const float* img, int n_out, int ld_img, float* const* images, int batch,
                    const Completion& c, cudaStream_t stream) {
  const int per_frame = std::max(1, std::min(64, (n_out / 4 + kThreads - 1) / kThreads));
  scatter_kernel<<<dim3(per_frame, batch), kThreads, 0, stream>>>(img, n_out, ld_img, images, c);
  check_launch("scatter_kernel");
}

void launch_signal(const Completion& c, cudaStream_t stream) {
  signal_kernel<<<1, 32, 0, stream>>>(c);
  check_launch("signal_kernel");
}

void launch_convert_rows(Precision p, const float* src, int rows, int n_meas, void* dst, int ld,
                         cudaStream_t stream) {
  dispatch_precision(p, [&](auto t) {
    using T = decltype(t);
    convert_rows_kernel<T>
        <<<1024, kThreads, 0, stream>>>(src, rows, n_meas, static_cast<T*>(dst), ld);
  });
  check_launch("convert_rows_kernel");
}

}  // namespace eit::gpu

namespace eit::gpu {

void set_frame_kernels_smem_limit(size_t bytes) {
  const int b = static_cast<int>(bytes);
  constexpr auto kAttr = cudaFuncAttributeMaxDynamicSharedMemorySize;
  auto all = [&](auto t) {
    using T = decltype(t);
    EIT_CUDA(cudaFuncSetAttribute(single_frame_kernel<T>, kAttr, b));
    EIT_CUDA(cudaFuncSetAttribute(prepare_kernel<T>, kAttr, b));
    EIT_CUDA(cudaFuncSetAttribute(rows_kernel<T, 4>, kAttr, b));
    EIT_CUDA(cudaFuncSetAttribute(rows_kernel<T, 8>, kAttr, b));
    EIT_CUDA(cudaFuncSetAttribute(batch_rows_kernel<T>, kAttr, b));
  };
  all(float{});
  all(__nv_bfloat16{});
  all(__half{});
  EIT_CUDA(cudaFuncSetAttribute(prepare_one_kernel, kAttr, b));
  // Kernels without dynamic shared memory: asking for their attributes loads them now. Under
  // CUDA's lazy loading (the default) a kernel's first launch otherwise loads its module, which
  // waits for the context to go idle, i.e. for the persistent kernel to exit (~500 ms idle):
  // the 16-frame-batch collapse of runs 3-6 (docs/gpu-notes.md).
  cudaFuncAttributes a{};
  EIT_CUDA(cudaFuncGetAttributes(&a, scatter_kernel));
  EIT_CUDA(cudaFuncGetAttributes(&a, signal_kernel));
}

}  // namespace eit::gpu
