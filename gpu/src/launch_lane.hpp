#pragma once
// LaunchLane: one CUDA stream's worth of resources for launched batches (one pending batch per
// lane): a cuBLAS handle, a completion event, device buffers for dv and images, mapped pinned
// frame descriptors and status words, and optional pinned staging for frames that live in
// unpinned memory. run() enqueues a batch without allocating; ready() polls the event.
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
  int ld_img;         // floats between images in the device image buffer
  bool staging;       // allocate pinned staging for unpinned frames
  int single_blocks;  // blocks of the single-frame kernels
  bool single_fused;  // one fused kernel for a single frame (else prepare + rows)
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

  // Enqueues the batch of n descriptors and records the event. BackendError on failure.
  void run(size_t n);
  // Whether the last run finished; `wait` blocks (spin, then back off). BackendError on failure.
  bool ready(bool wait);
  uint32_t status(size_t i) const noexcept { return status_[i]; }

 private:
  LaneShape shape_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t event_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  void* d_dv_ = nullptr;    // ld × max_batch elements of H's type (GEMM input)
  float* d_dv1_ = nullptr;  // ld floats: one frame's dv for the unfused single-frame path
  float* d_img_ = nullptr;
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
