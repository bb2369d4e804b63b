#pragma once
// Host side of the persistent single-frame kernels: owns the mailbox and the LL ring (mapped
// pinned memory), the device state, the kernel's stream; posts frames, polls completion, restarts
// the kernel after it exited on idle, stops it. One thread (the reconstructor's) calls everything.
// post() and done() never allocate or lock; a CUDA failure throws pipeline::BackendError naming
// the call.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "device_types.hpp"
#include "eit/gpu/precision.hpp"
#include "persistent_kernel.hpp"

namespace eit::gpu {

class PersistentEngine {
 public:
  // Allocates the mailbox and device buffers; the kernel starts with the first post().
  // cluster_blocks > 0: the one-cluster kernel with that many blocks (≤ kMaxClusterBlocks) where
  // the device runs it, else the relay kernel with `blocks` blocks. n_meas ≤ persistent_max_meas().
  PersistentEngine(Precision precision, const DeviceModel& model, int blocks, int cluster_blocks,
                   double idle_exit_ms);
  ~PersistentEngine();
  PersistentEngine(const PersistentEngine&) = delete;
  PersistentEngine& operator=(const PersistentEngine&) = delete;

  // Posts one frame: copies its n_meas values (host memory) into the LL ring with the image's
  // device address and flags (kBadFrame); returns its sequence number. At most kRing − 1 posted
  // frames may be unfinished.
  uint64_t post(const float* values, float* image, uint32_t flags);
  // Whether frame `seq` is finished (its image written); bad = the frame's status.
  bool done(uint64_t seq, bool& bad);
  // Waits (spinning briefly, then backing off) until frame `seq` is finished.
  bool wait(uint64_t seq, bool& bad);
  // Stops the kernel (after the frames in progress) and waits for it; safe to call repeatedly.
  void stop() noexcept;

  bool running() const noexcept { return running_; }
  // Whether the kernel is on the GPU right now (queries its stream; not for the per-frame path).
  bool resident() const noexcept;
  uint64_t launches() const noexcept { return launches_; }
  int blocks() const noexcept { return blocks_; }
  bool cluster() const noexcept { return cluster_; }

 private:
  void launch(uint64_t start_seq);
  void wait_exit();  // after `exiting` or stop: waits for the kernel to end

  Precision precision_;
  DeviceModel model_;
  int blocks_;
  int rows_per_block_;
  bool cluster_;
  long long idle_exit_ns_;
  int ll_words_;
  cudaStream_t stream_ = nullptr;
  Mailbox* mailbox_ = nullptr;  // host address (cudaHostAlloc, mapped)
  Mailbox* mailbox_dev_ = nullptr;
  uint64_t* ll_ = nullptr;  // host address of the LL ring (cudaHostAlloc, mapped)
  const uint64_t* ll_dev_ = nullptr;
  PersistentState* state_ = nullptr;       // device
  PersistentState* state_init_ = nullptr;  // pinned host: what a launch starts from
  float* dv_ = nullptr;                    // device, 2 × ld
  uint64_t posted_ = 0;
  bool running_ = false;
  uint64_t launches_ = 0;
};

}  // namespace eit::gpu
