#pragma once
// The persistent single-frame kernel and the memory it shares with the host.
//
// Protocol (frames numbered 1, 2, …): the host fills ring[s % kRing] (values, image | flags) and
// then its two tags = s. Block 0 (one thread) polls that entry in mapped host memory with two
// 16-byte loads in flight at once (one PCIe round trip yields both the signal and the frame's
// addresses), reads the frame, computes dv into device
// buffer dv[s & 1], waits until every block finished frame s − 1, then relays s (relay_seq in
// device memory). Every block polls relay_seq (device memory: cheap), computes its rows, writes
// them to the image with 16-byte stores and arrives on a device counter; the last block writes
// done[s % kRing] = 2 s + bad and then done_seq = s to host memory. Idle: polls back off with
// __nanosleep after hot_ns, and after idle_exit_ns block 0 sets `exiting`, re-reads the entry
// (Dekker-style with the host's post + fence + read of `exiting`), drains what was posted and
// exits. stop = 1 exits at once (after the frames in progress).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "device_types.hpp"
#include "eit/gpu/precision.hpp"

namespace eit::gpu {

inline constexpr int kRing = 16;  // frames the host may post ahead of the kernel

// One posted frame: each 16-byte half carries the tag, so a half read in one load is consistent
// (the host writes the payloads first, then tag_b, then tag_a).
struct alignas(32) PostedFrame {
  volatile uint64_t tag_a;
  const float* volatile values;
  volatile uint64_t tag_b;
  volatile uint64_t image_flags;  // image address | kBadFrame (images are 16-byte aligned)
};

struct alignas(64) Mailbox {  // mapped host memory
  // host → device
  PostedFrame ring[kRing];
  volatile uint32_t stop;
  uint32_t pad0[15];
  // device → host (own cache lines)
  alignas(64) volatile uint64_t done[kRing];  // frame s finished: done[s % kRing] = 2 s + bad
  volatile uint64_t done_seq;                 // last finished frame (written after done[])
  volatile uint32_t exiting;
};

struct alignas(64) PersistentState {  // device memory, set by the host before each launch
  uint64_t relay_seq;                 // last frame relayed to every block; kExitSeq: exit
  uint64_t done_seq;                  // last frame every block finished
  uint32_t arrive;                    // blocks finished with the current frame
  uint32_t relay_bad;
  float* relay_image;
};
inline constexpr uint64_t kExitSeq = ~uint64_t{0};

struct PersistentParams {
  DeviceModel model;
  Mailbox* mailbox;        // device address
  PersistentState* state;  // device memory
  float* dv;               // 2 × ld floats, device memory
  uint64_t start_seq;      // first frame to wait for
  int rows_per_block;
  long long hot_ns;        // poll without sleeping this long after the last frame
  long long idle_exit_ns;  // exit after this long without a frame
};

// Enqueues the kernel with `blocks` blocks on `stream` (BackendError if the launch fails).
void launch_persistent(Precision p, const PersistentParams& params, int blocks,
                       cudaStream_t stream);
// Dynamic shared memory the kernel needs, and raising its limit (set-up only).
size_t persistent_smem_bytes(const DeviceModel& m, int rows_per_block);
void set_persistent_smem_limit(size_t bytes);

}  // namespace eit::gpu
