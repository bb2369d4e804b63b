#pragma once
// The persistent single-frame kernels and the memory they share with the host.
//
// Posting (frames numbered 1, 2, …): the host writes frame s into entry s % kRing of the LL ring
// (mapped host memory) as 8-byte words {payload in the low 32 bits, tag = the low 32 bits of s in
// the high 32}: the n_meas values (padded with a tagged 0 to an even count), then the image's
// address in two words (low half | kBadFrame, high half). Block 0 polls the whole entry, each
// thread its 16-byte pairs, until every tag matches: one PCIe round trip brings the signal and the
// values together, where a tag word followed by a read of the values took two (in a probe on the
// H200, 2.4 µs of 11.6 at 1024×208: docs/gpu-notes.md, run 12). A pair read in one load is consistent word by word
// (8-byte halves are single copies), and a stale entry carries another tag.
//
// Two kernels take it from there:
// - One cluster (sm_90 thread-block cluster of up to 16 blocks): block 0 computes dv into its
//   shared memory, the others read it through distributed shared memory after a cluster barrier;
//   each block writes its image rows and then its own completion word (block 0: done[s % kRing]
//   = 2 s + bad; block b: block_done[b] = s). For models whose rows fit a few passes of 16 SMs.
// - Relay (any number of blocks): block 0 computes dv into device buffer dv[s & 1], waits until
//   every block finished frame s − 1, then relays s (relay_seq in device memory). Every block
//   polls relay_seq, computes its rows, writes them and arrives on a device counter; the last
//   block writes done[s % kRing] = 2 s + bad, then done_seq = s.
// Idle: polls back off with __nanosleep after hot_ns, and after idle_exit_ns block 0 sets
// `exiting`, polls the entry once more (Dekker-style with the host's post + fence + read of
// `exiting`), drains what was posted and exits. stop = 1 exits at once (after the frames in
// progress).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "device_types.hpp"
#include "eit/gpu/precision.hpp"

namespace eit::gpu {

inline constexpr int kRing = 16;              // frames the host may post ahead of the kernel
inline constexpr int kMaxClusterBlocks = 16;  // H100/H200 non-portable cluster size
inline constexpr uint64_t kExitSeq = ~uint64_t{0};

// Words of one LL entry for n_meas values: values padded to even, plus the image address.
inline int ll_entry_words(int n_meas) { return (n_meas + 1) / 2 * 2 + 2; }

struct alignas(64) Mailbox {  // mapped host memory
  // host → device
  volatile uint32_t stop;
  uint32_t pad0[15];
  // device → host (own cache lines)
  alignas(64) volatile uint64_t done[kRing];  // frame s finished: done[s % kRing] = 2 s + bad
  // The last frame finished, written after done[] (cluster: by block 0; relay: the last block).
  volatile uint64_t done_seq;
  volatile uint32_t exiting;
  // One cluster: the last frame block b (1 ≤ b < blocks) finished.
  alignas(64) volatile uint64_t block_done[kMaxClusterBlocks];
};

struct alignas(64) PersistentState {  // device memory, set by the host before each launch
  uint64_t relay_seq;                 // last frame relayed to every block; kExitSeq: exit
  uint64_t done_seq;                  // last frame every block finished
  uint32_t arrive;                    // blocks finished with the current frame
  uint32_t relay_bad;
  float* relay_image;
};

struct PersistentParams {
  DeviceModel model;
  Mailbox* mailbox;        // device address
  const uint64_t* ll;      // device address of the LL ring: kRing entries of ll_words words
  int ll_words;
  PersistentState* state;  // device memory (relay kernel)
  float* dv;               // 2 × ld floats, device memory (relay kernel)
  uint64_t start_seq;      // first frame to wait for
  int rows_per_block;
  long long hot_ns;        // poll without sleeping this long after the last frame
  long long idle_exit_ns;  // exit after this long without a frame
};

// Enqueues the relay kernel with `blocks` blocks, or the one-cluster kernel with `blocks` (≤ 16)
// blocks in one cluster, on `stream` (BackendError if the launch fails).
void launch_persistent(Precision p, const PersistentParams& params, int blocks,
                       cudaStream_t stream);
void launch_persistent_cluster(Precision p, const PersistentParams& params, int blocks,
                               cudaStream_t stream);
// Dynamic shared memory the kernels need (the same layout for both), and raising the relay
// kernel's limit (set-up only).
size_t persistent_smem_bytes(const DeviceModel& m, int rows_per_block);
void set_persistent_smem_limit(size_t bytes);
// Set-up for the one-cluster kernel: raises its shared-memory limit, allows more than 8 blocks
// (the non-portable cluster size) and returns whether one cluster of `blocks` blocks with `smem`
// bytes each can run on the current device (compute capability ≥ 9.0). false, with the CUDA
// error cleared, where it cannot.
bool prepare_persistent_cluster(Precision p, int blocks, size_t smem);
// Values per frame the persistent kernels accept: block 0's threads poll at most 32 pairs each.
inline constexpr int persistent_max_meas() { return 2 * 32 * kThreads - 2; }

}  // namespace eit::gpu
