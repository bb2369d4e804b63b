#pragma once
// L2Residency: keeps as much of H as the device allows in the persisting part of L2, for the
// launched path's kernels (rows kernel, own batch kernel, cuBLAS GEMM). A launched frame of an H
// larger than L2 (20,000×928 float32: 70.8 MiB; the H200's L2: 60 MB) otherwise streams all of H
// from HBM every frame, and a frame that follows an idle millisecond finds none of it in L2.
// Sets the context's persisting-L2 set-aside (cudaLimitPersistingL2CacheSize) to
// min(|H|, the device's maximum), and gives each stream an access-policy window over all of H
// whose hit ratio makes the persisting lines fill the set-aside; the rest of H streams. The
// destructor demotes the persisting lines and restores the limit it found.
// Only where the set-aside holds at least half of H and one window covers it (worth_keeping):
// on the H200 (37.5 MiB set-aside) 20,000×928 float32 (70.8 MiB) went 37.2 → 31.9 µs p50 per
// frame, but 200,000×928 (5 % kept) 178 → 210 µs (docs/gpu-notes.md, run 15). Elsewhere, on
// devices without persisting L2 (before sm_80), and in contexts that may not set it aside: none,
// active() is false, and H streams as before.
//
// Set-up only (throws pipeline::BackendError naming the CUDA call); one per reconstructor. The
// set-aside is the context's: two reconstructors in one process share it, the later one sets it.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace eit::gpu {

class L2Residency {
 public:
  L2Residency(int device, const void* base, size_t bytes);
  ~L2Residency();
  L2Residency(const L2Residency&) = delete;
  L2Residency& operator=(const L2Residency&) = delete;

  // The rule above: H's `bytes` against the device's largest set-aside and window.
  static bool worth_keeping(size_t bytes, size_t max_persisting, size_t max_window) noexcept;

  bool active() const noexcept { return window_bytes_ > 0; }
  size_t device_max_persisting() const noexcept { return device_max_persisting_; }  // 0: none
  size_t device_max_window() const noexcept { return device_max_window_; }
  size_t persisting_bytes() const noexcept { return set_aside_; }  // L2 kept for H
  size_t window_bytes() const noexcept { return window_bytes_; }
  float hit_ratio() const noexcept { return hit_ratio_; }
  // Gives `stream`'s kernels the window (no-op when not active).
  void apply(cudaStream_t stream) const;

 private:
  const void* base_ = nullptr;
  size_t set_aside_ = 0, window_bytes_ = 0, previous_limit_ = 0;
  size_t device_max_persisting_ = 0, device_max_window_ = 0;
  float hit_ratio_ = 0;
  bool limit_set_ = false;  // the destructor restores previous_limit_
};

}  // namespace eit::gpu
