#pragma once
// Launchers for the launched (non-persistent) path. Each enqueues on `stream` and checks the
// launch (BackendError naming the kernel). Element type of H given at run time.
#include <cuda_runtime_api.h>

#include "device_types.hpp"
#include "eit/gpu/precision.hpp"

namespace eit::gpu {

// Kernels that end a batch signal completion through `c` (device_types.hpp).

// One frame in one launch: every block reads the frame itself, computes its rows and writes
// them to f.image; block 0 writes the bad flag to *status. `blocks` blocks.
void launch_single_frame(Precision p, const DeviceModel& m, const FrameDesc& f, int blocks,
                         uint32_t* status, const Completion& c, cudaStream_t stream);

// B frames → dv (ld × B, element type p) in device memory; bad frames get zero columns and
// status[b] = 1 (good frames leave status[b] as it was: the caller zeroes it). descs: B
// descriptors (device address; may be mapped host memory). The values come from the
// descriptors (zero-copy), or, when `staged` is given, from staged + b · staged_pitch in device
// memory (brought up by the copy engine). The image addresses are copied to images[b] (device
// memory) for the kernels that follow: many blocks each reading mapped host memory serialise on
// PCIe (measured: ~2 µs per block).
void launch_prepare(Precision p, const DeviceModel& m, const FrameDesc* descs, int batch, void* dv,
                    uint32_t* status, float** images, cudaStream_t stream,
                    const float* staged = nullptr, int staged_pitch = 0);
// Same, one frame given by value (no descriptor read), dv float32 in device memory.
void launch_prepare_one(const DeviceModel& m, const FrameDesc& f, float* dv, uint32_t* status,
                        cudaStream_t stream);

// How a single frame's rows kernel is shaped: H's rows split evenly over `blocks` blocks; each
// warp takes rows_per_warp (4 or 8) rows at a time.
struct RowsShape {
  int blocks;
  int rows_per_warp;
};

// image rows = H · dv for one frame (dv float32, device memory), written to image (device
// address).
void launch_rows(Precision p, const DeviceModel& m, const float* dv, float* image,
                 const RowsShape& shape, const Completion& c, cudaStream_t stream);

// How many blocks of the rows kernel (rows_per_warp 4 or 8, `smem` bytes of dynamic shared
// memory) one SM holds at once (at least 1).
int rows_kernel_blocks_per_sm(Precision p, int rows_per_warp, size_t smem);

// Batch without cuBLAS: frame b's image rows = H · dv[b] (dv float32, ld per frame), written to
// images[b] (device array from launch_prepare); `blocks` row chunks per frame.
void launch_batch_rows(Precision p, const DeviceModel& m, const float* dv, float* const* images,
                       int batch, int blocks, const Completion& c, cudaStream_t stream);

// images (column b at img + b·ld_img) → images[b] (device array from launch_prepare).
void launch_scatter(const float* img, int n_out, int ld_img, float* const* images, int batch,
                    const Completion& c, cudaStream_t stream);

// Signals completion of what the stream did before (after a copy-engine transfer).
void launch_signal(const Completion& c, cudaStream_t stream);

// Converts `rows` rows of n_meas floats (src, device) into H's layout (dst, ld elements per row,
// padding zeroed).
void launch_convert_rows(Precision p, const float* src, int rows, int n_meas, void* dst, int ld,
                         cudaStream_t stream);

size_t element_bytes(Precision p);

}  // namespace eit::gpu

namespace eit::gpu {
// Raises the dynamic shared-memory limit of every launched kernel to `bytes` and loads every
// launched-path kernel now, not at its first launch (set-up only).
void set_frame_kernels_smem_limit(size_t bytes);
}  // namespace eit::gpu
