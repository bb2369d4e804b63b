#pragma once
// LaunchLane: one CUDA stream's worth of resources for launched batches (one pending batch per
// lane): a cuBLAS handle, device buffers for dv and images, mapped pinned frame descriptors,
// status words and a completion word, and optional pinned staging for frames that live in
// unpinned memory. run() enqueues a batch without allocating; ready() polls the completion word
// the batch's last kernel writes (and, now and then, the stream for errors).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "device_types.hpp"
#include "eit/gpu/precision.hpp"

namespace eit::gpu {

struct LaneShape {
  Precision precision;
  DeviceModel model;
  size_t max_batch;
  int ld_img;                   // floats between images in the device image buffer
  bool staging;                 // allocate pinned staging for unpinned frames
  size_t own_kernel_max_batch;  // batches up to this size use the own kernel, not cuBLAS
  int single_blocks;            // blocks of the single-frame kernels
  bool single_fused;            // one fused kernel for a single frame (else prepare + rows)
};

class LaunchLane {
 public:
  explicit LaunchLane(const LaneShape& shape);
  ~LaunchLane();
  LaunchLane(const LaunchLane&) = delete;
  LaunchLane& operator=(const LaunchLane&) = delete;

  // Descriptors of the next batch (host addresses of mapped memory): fill, then run(n).
  FrameDesc* descs() noexcept { return descs_; }
  // Staging for frame i (host address; device address via staged_*_dev), nullptr without staging.
  float* staged_values(size_t i) noexcept;
  float* staged_image(size_t i) noexcept;
  const float* staged_values_dev(size_t i) const noexcept;
  float* staged_image_dev(size_t i) const noexcept;
  bool has_staging() const noexcept { return stage_values_ != nullptr; }

  // Enqueues the batch of n descriptors. When the n images lie at image_base + i · pitch_bytes in
  // pinned memory (image_base non-null), they come down by one copy-engine transfer instead of
  // the scatter kernel. BackendError on failure.
  void run(size_t n, float* image_base = nullptr, size_t pitch_bytes = 0);
  // Whether the last run finished; `wait` blocks (spin, then back off). BackendError on failure.
  bool ready(bool wait);
  // Runs one GEMM for every power-of-two batch size up to max_batch so cuBLAS loads its kernels
  // (and any fault shows) at set-up rather than on the per-frame path.
  void warm_up();
  // Batches through the backend's own kernel instead of cuBLAS (when cuBLAS failed at warm-up).
  void use_own_batch_kernel() noexcept { own_batch_kernel_ = true; }
  uint32_t status(size_t i) const noexcept { return status_[i]; }

 private:
  LaneShape shape_;
  cudaStream_t stream_ = nullptr;
  uint32_t* counter_ = nullptr;  // device: blocks arrived in the batch's last kernel
  uint64_t* done_ = nullptr;     // mapped host: last finished run
  uint64_t* done_dev_ = nullptr;
  uint64_t seq_ = 0;  // runs so far
  uint32_t polls_ = 0;
  bool own_batch_kernel_ = false;
  cublasHandle_t blas_ = nullptr;
  void* d_dv_ = nullptr;    // ld × max_batch elements of H's type (GEMM input)
  float* d_dv1_ = nullptr;  // ld floats: one frame's dv for the unfused single-frame path
  float* d_img_ = nullptr;
  float** d_images_ = nullptr;  // device: the batch's image addresses (written by prepare)
  FrameDesc* descs_ = nullptr;
  FrameDesc* descs_dev_ = nullptr;
  uint32_t* status_ = nullptr;
  uint32_t* status_dev_ = nullptr;
  float* stage_values_ = nullptr;
  float* stage_image_ = nullptr;
  float* stage_values_dev_ = nullptr;
  float* stage_image_dev_ = nullptr;
};

}  // namespace eit::gpu
