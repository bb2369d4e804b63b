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
#include "frame_kernels.hpp"
#include "l2_residency.hpp"

namespace eit::gpu {

struct LaneShape {
  Precision precision;
  DeviceModel model;
  size_t max_batch;
  int ld_img;                   // floats between images in the device image buffer (= pool stride)
  size_t own_kernel_max_batch;  // batches up to this size use the own kernel, not cuBLAS
  int single_blocks;            // blocks of the fused single-frame and own batch kernels
  bool single_fused;            // one fused kernel for a single frame (else prepare + rows)
  RowsShape single_rows;        // the rows kernel of an unfused single frame
  // Floats per frame in the device staging buffer for a cuBLAS-path batch's values (≥ n_meas);
  // 0: never stage (prepare reads the values by zero-copy loads).
  size_t stage_ld;
  bool stage_descs;  // with staged values, descriptors go up by a copy-engine transfer too
  const L2Residency* l2 = nullptr;  // H's window in persisting L2 for the lane's stream; or none
};

class LaunchLane {
 public:
  explicit LaunchLane(const LaneShape& shape);
  ~LaunchLane();
  LaunchLane(const LaunchLane&) = delete;
  LaunchLane& operator=(const LaunchLane&) = delete;

  // Descriptors of the next batch (host addresses of mapped, write-combined memory: write only,
  // never read back): fill, then run(n). A single frame is passed to run() by value instead.
  FrameDesc* descs() noexcept { return descs_; }

  // Enqueues the batch of n descriptors. When the n images lie at image_base + i · pitch_bytes in
  // pinned memory (image_base non-null), they come down by one copy-engine transfer instead of
  // the scatter kernel: a linear one when pitch_bytes equals the device layout's, else 2-D.
  // When the n frames' values lie at values_base + i · values_pitch floats in pinned memory
  // (values_base non-null, values_pitch ≤ stage_ld), a cuBLAS-path batch brings them up by one
  // copy-engine transfer instead of zero-copy loads in prepare, and with stage_descs so do the
  // descriptors (docs/gpu-notes.md, runs 10 and 11).
  // cuBLAS computes gemm_columns(n) ≥ n columns (shapes warmed at set-up); only n come down.
  // Returns whether the values were staged. BackendError on failure.
  bool run(size_t n, const FrameDesc& first, float* image_base = nullptr, size_t pitch_bytes = 0,
           const float* values_base = nullptr, size_t values_pitch = 0);
  // Whether the last run finished; `wait` blocks (spin, then back off). BackendError on failure.
  bool ready(bool wait);
  // Runs one GEMM for every column count gemm_columns() can return, so cuBLAS loads its kernels
  // (and any fault shows) at set-up rather than on the per-frame path.
  void warm_up();
  // GEMM columns for a batch of n: the next power of two, at most max_batch.
  size_t gemm_columns(size_t n) const noexcept;
  // Batches through the backend's own kernel instead of cuBLAS (when cuBLAS failed at warm-up).
  void use_own_batch_kernel() noexcept { own_batch_kernel_ = true; }
  uint32_t status(size_t i) const noexcept { return status_[i]; }

 private:
  void gemm(int columns);  // d_img_[:, :columns] = H · d_dv_[:, :columns] on stream_

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
  float** d_images_ = nullptr;    // device: the batch's image addresses (written by prepare)
  float* d_values_ = nullptr;     // device: staged values, stage_ld floats per frame (or null)
  FrameDesc* d_descs_ = nullptr;  // device: staged descriptors (stage_descs only)
  FrameDesc* descs_ = nullptr;
  FrameDesc* descs_dev_ = nullptr;
  uint32_t* status_ = nullptr;
  uint32_t* status_dev_ = nullptr;
};

}  // namespace eit::gpu
