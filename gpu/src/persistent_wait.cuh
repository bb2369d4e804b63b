#pragma once
// Device side of posting (protocol in persistent_kernel.hpp), shared by both persistent kernels:
// block 0 waits for frame s's LL entry and turns it into dv, and on the way handles stop, idle
// back-off and the idle exit.
#include <cstdint>

#include "device_layout.cuh"
#include "persistent_kernel.hpp"

namespace eit::gpu {

enum Command : int { kRun = 0, kExit = 1 };

__device__ __forceinline__ long long global_ns() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Sleep after `idle` ns without a frame: none while hot, then doubling up to 100 µs. (A 128 ns
// pause while hot cost ~0.7 µs of p50 and did not help batches: removed.)
__device__ __forceinline__ void idle_pause(long long idle, long long hot_ns, unsigned& sleep_ns) {
  if (idle < hot_ns) {
    sleep_ns = 0;
    return;
  }
  sleep_ns = sleep_ns == 0 ? 1000u : min(2u * sleep_ns, 100000u);
  __nanosleep(sleep_ns);
}

// Block 0's thread 0, between polls of an entry that is not complete yet.
struct IdleClock {
  long long last_frame_ns;
  unsigned sleep_ns = 0;
  unsigned polls = 0;
  bool exiting = false;
};

// What an entry carries besides the values (shared memory; valid after kRun).
struct PostedImage {
  float* image;
  uint32_t flagged;
};

// Thread 0: kExit on stop, or once an announced idle exit has re-polled the entry in vain;
// otherwise announces the idle exit when due, or backs off, and says to poll again.
__device__ __forceinline__ int idle_step(const PersistentParams& p, IdleClock& c) {
  if (c.exiting) return kExit;  // drained everything posted before we announced the exit
  if (++c.polls % 64 == 0 && p.mailbox->stop) return kExit;  // a second round trip: now and then
  const long long idle = global_ns() - c.last_frame_ns;
  if (idle > p.idle_exit_ns) {
    p.mailbox->exiting = 1;
    __threadfence_system();
    c.exiting = true;  // poll once more: a frame posted before the host saw `exiting` is drained
    return kRun;
  }
  idle_pause(idle, p.hot_ns, c.sleep_ns);
  return kRun;
}

// Whole block: polls entry `seq` (each thread its pairs threadIdx.x + j·blockDim.x, keeping those
// already seen) until every tag matches; then dv, padded with zeros to ld, is in s_dv and the
// image in s_post. Returns kRun and, to every thread, whether the frame is bad (flagged by the
// host, or a non-finite dv); or kExit on stop or idle exit. At most 32 pairs per thread
// (persistent_max_meas()).
__device__ __forceinline__ int block_wait_frame(const PersistentParams& p, uint64_t seq,
                                                IdleClock& clock, float* s_dv, PostedImage& s_post,
                                                int& s_cmd, bool& bad) {
  const DeviceModel& m = p.model;
  const ulonglong2* entry =
      reinterpret_cast<const ulonglong2*>(p.ll + (seq % kRing) * static_cast<size_t>(p.ll_words));
  const uint32_t tag = static_cast<uint32_t>(seq);
  const int n_pairs = p.ll_words / 2, image_pair = n_pairs - 1;
  uint32_t mine = 0, seen = 0;
  for (int i = threadIdx.x, j = 0; i < n_pairs; i += blockDim.x, ++j) mine |= 1u << j;
  bool non_finite = false;
  for (;;) {
    for (int i = threadIdx.x, j = 0; i < n_pairs; i += blockDim.x, ++j) {
      if (seen >> j & 1u) continue;
      const ulonglong2 w = __ldcv(entry + i);
      if (static_cast<uint32_t>(w.x >> 32) != tag || static_cast<uint32_t>(w.y >> 32) != tag)
        continue;
      seen |= 1u << j;
      if (i == image_pair) {
        const uint64_t a = (w.x & 0xffffffffull) | (w.y << 32);
        s_post.image = reinterpret_cast<float*>(a & ~uint64_t{15});
        s_post.flagged = static_cast<uint32_t>(a & kBadFrame);
        continue;
      }
      const int k = 2 * i;
      s_dv[k] = frame_dv(m, k, __uint_as_float(static_cast<uint32_t>(w.x)));
      non_finite |= !isfinite(s_dv[k]);
      if (k + 1 < m.n_meas) {
        s_dv[k + 1] = frame_dv(m, k + 1, __uint_as_float(static_cast<uint32_t>(w.y)));
        non_finite |= !isfinite(s_dv[k + 1]);
      }
    }
    if (__syncthreads_and(seen == mine)) break;
    if (threadIdx.x == 0) s_cmd = idle_step(p, clock);
    __syncthreads();
    if (s_cmd == kExit) return kExit;
  }
  for (int i = m.n_meas + threadIdx.x; i < m.ld; i += blockDim.x) s_dv[i] = 0.f;
  if (threadIdx.x == 0) clock.last_frame_ns = global_ns();
  bad = __syncthreads_or(non_finite || s_post.flagged != 0) != 0;
  return kRun;
}

}  // namespace eit::gpu
