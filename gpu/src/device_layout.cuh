#pragma once
// Device-side building blocks shared by the kernels (layout in device_types.hpp): prepare a frame
// (subtract the reference, normalise, detect non-finite), multiply a block's rows of H with
// 16-byte loads, store a block's image rows with 16-byte stores. kThreads threads per block.
// For their host launchers: dispatch_precision, the element type H is stored in.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "device_types.hpp"
#include "eit/gpu/precision.hpp"

namespace eit::gpu {

// Host: calls f with a value of the element type that precision p stores H in (float, bf16 or
// fp16), so that a launcher instantiates its kernel for that type.
template <typename F>
void dispatch_precision(Precision p, F&& f) {
  switch (p) {
    case kFloat32:
      f(float{});
      break;
    case kBf16:
      f(__nv_bfloat16{});
      break;
    case kFp16:
      f(__half{});
      break;
  }
}

template <typename T>
struct VecOf;
template <>
struct VecOf<float> {
  static constexpr int n = 4;
};
template <>
struct VecOf<__nv_bfloat16> {
  static constexpr int n = 8;
};
template <>
struct VecOf<__half> {
  static constexpr int n = 8;
};

__device__ __forceinline__ void load16(const float* p, float (&x)[4]) {
  const float4 v = __ldg(reinterpret_cast<const float4*>(p));
  x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
}
__device__ __forceinline__ void load16(const __nv_bfloat16* p, float (&x)[8]) {
  const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w[i]));
    x[2 * i] = f.x, x[2 * i + 1] = f.y;
  }
}
__device__ __forceinline__ void load16(const __half* p, float (&x)[8]) {
  const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&w[i]));
    x[2 * i] = f.x, x[2 * i + 1] = f.y;
  }
}

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}

// One measurement's dv = ((v − v_ref) − v_ref_lo) · weight: v_ref split in two floats keeps the
// difference of two nearly equal voltages exact to float32.
__device__ __forceinline__ float frame_dv(const DeviceModel& m, int i, float v) {
  return ((v - __ldcg(m.v_ref + i)) - __ldcg(m.v_ref_lo + i)) * __ldcg(m.weight + i);
}

// dv = (v − v_ref) · weight into dv[0, ld) (padding 0), reading v from `values` (host-mapped or
// device memory, not cached: the host rewrites slots). Returns, to every thread of the block,
// whether the frame is bad (flagged, or any dv non-finite). Contains a block barrier.
__device__ __forceinline__ bool block_prepare(const DeviceModel& m, const float* values,
                                              bool flagged, float* dv) {
  bool bad = flagged;
  const bool vec = (m.n_meas % 4 == 0) && (reinterpret_cast<uintptr_t>(values) % 16 == 0);
  if (vec) {
    for (int i = threadIdx.x; i < m.n_meas / 4; i += blockDim.x) {
      const float4 v = __ldcv(reinterpret_cast<const float4*>(values) + i);
      const float4 r = __ldcg(reinterpret_cast<const float4*>(m.v_ref) + i);
      const float4 q = __ldcg(reinterpret_cast<const float4*>(m.v_ref_lo) + i);
      const float4 w = __ldcg(reinterpret_cast<const float4*>(m.weight) + i);
      const float4 d = make_float4(((v.x - r.x) - q.x) * w.x, ((v.y - r.y) - q.y) * w.y,
                                   ((v.z - r.z) - q.z) * w.z, ((v.w - r.w) - q.w) * w.w);
      bad |= !(isfinite(d.x) && isfinite(d.y) && isfinite(d.z) && isfinite(d.w));
      reinterpret_cast<float4*>(dv)[i] = d;
    }
  } else {
    for (int i = threadIdx.x; i < m.n_meas; i += blockDim.x) {
      const float d = frame_dv(m, i, __ldcv(values + i));
      bad |= !isfinite(d);
      dv[i] = d;
    }
  }
  for (int i = m.n_meas + threadIdx.x; i < m.ld; i += blockDim.x) dv[i] = 0.f;
  return __syncthreads_or(bad) != 0;
}

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

// out[r − r0] = H[r, :] · dv for r in [r0, r1) (r0 a multiple of 4); each warp takes 4 rows at a
// time so a lane keeps four 16-byte loads in flight. dv in shared memory.
template <typename T>
__device__ __forceinline__ void block_rows(const DeviceModel& m, const float* __restrict__ dv,
                                           int r0, int r1, float* __restrict__ out) {
  constexpr int V = VecOf<T>::n;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, n_warps = blockDim.x / 32;
  const int n_vec = m.ld / V;
  const T* H = static_cast<const T*>(m.H);
  for (int g = r0 + 4 * warp; g < r1; g += 4 * n_warps) {
    const T* row[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) row[j] = H + static_cast<size_t>(min(g + j, r1 - 1)) * m.ld;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll 2
    for (int k = lane; k < n_vec; k += 32) {
      float h[4][V];
#pragma unroll
      for (int j = 0; j < 4; ++j) load16(row[j] + k * V, h[j]);
      float d[V];
#pragma unroll
      for (int e = 0; e < V; e += 4) {
        const float4 q = reinterpret_cast<const float4*>(dv)[(k * V + e) / 4];
        d[e] = q.x, d[e + 1] = q.y, d[e + 2] = q.z, d[e + 3] = q.w;
      }
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < V; ++e) acc[j] = fmaf(h[j][e], d[e], acc[j]);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[j] = warp_sum(acc[j]);
    if (lane == 0) {
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (g + j < r1) out[g + j - r0] = acc[j];
    }
  }
}

// Like block_rows, for the persistent kernels, where a frame's latency is a chain of memory round
// trips: each warp takes 8 rows at a time and each lane keeps two 16-byte loads per row (16 in
// all) in flight, so a 208-column block of up to 64 rows costs one L2 round trip, not two to four
// (1024×208 on 16 blocks, H200: docs/gpu-notes.md, run 13).
template <typename T>
__device__ __forceinline__ void block_rows_ilp(const DeviceModel& m, const float* __restrict__ dv,
                                               int r0, int r1, float* __restrict__ out) {
  constexpr int V = VecOf<T>::n, kRows = 8;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, n_warps = blockDim.x / 32;
  const int n_vec = m.ld / V;
  const T* H = static_cast<const T*>(m.H);
  for (int g = r0 + kRows * warp; g < r1; g += kRows * n_warps) {
    float acc[kRows] = {};
    for (int k = lane; k < n_vec; k += 64) {
      const bool second = k + 32 < n_vec;
      float h[kRows][2][V];
#pragma unroll
      for (int j = 0; j < kRows; ++j) {
        const T* row = H + static_cast<size_t>(min(g + j, r1 - 1)) * m.ld;
        load16(row + k * V, h[j][0]);
        if (second) {
          load16(row + (k + 32) * V, h[j][1]);
        } else {
#pragma unroll
          for (int e = 0; e < V; ++e) h[j][1][e] = 0.f;
        }
      }
      float d[2][V];
#pragma unroll
      for (int e = 0; e < V; ++e) {
        d[0][e] = dv[k * V + e];
        d[1][e] = second ? dv[(k + 32) * V + e] : 0.f;
      }
#pragma unroll
      for (int j = 0; j < kRows; ++j)
#pragma unroll
        for (int e = 0; e < V; ++e)
          acc[j] = fmaf(h[j][1][e], d[1][e], fmaf(h[j][0][e], d[0][e], acc[j]));
    }
#pragma unroll
    for (int j = 0; j < kRows; ++j) acc[j] = warp_sum(acc[j]);
    if (lane < kRows && g + lane < r1) {
      float v = acc[0];
#pragma unroll
      for (int j = 1; j < kRows; ++j)
        if (lane == j) v = acc[j];
      out[g + lane - r0] = v;
    }
  }
}

// image[r0, r1) = zero ? 0 : out[0, r1 − r0), 16-byte stores when aligned. Call after a barrier.
__device__ __forceinline__ void block_store(float* image, int r0, int r1, const float* out,
                                            bool zero) {
  const int n = r1 - r0;
  float* dst = image + r0;
  int done = 0;
  if (reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
    const int n4 = n / 4;
    for (int i = threadIdx.x; i < n4; i += blockDim.x)
      reinterpret_cast<float4*>(dst)[i] =
          zero ? make_float4(0.f, 0.f, 0.f, 0.f) : reinterpret_cast<const float4*>(out)[i];
    done = 4 * n4;
  }
  for (int i = done + threadIdx.x; i < n; i += blockDim.x) dst[i] = zero ? 0.f : out[i];
}

}  // namespace eit::gpu

namespace eit::gpu {

// Every block calls this at its end: makes the block's writes visible to the host, and the last
// block of the grid to arrive resets the counter and writes c.seq to c.done.
__device__ __forceinline__ void arrive_and_signal(const Completion& c) {
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned total = gridDim.x * gridDim.y * gridDim.z;
    if (atomicAdd(c.counter, 1u) == total - 1) {
      __threadfence();
      *reinterpret_cast<volatile uint32_t*>(c.counter) = 0;
      __threadfence_system();
      *c.done = c.seq;
    }
  }
}

}  // namespace eit::gpu
