#pragma once
// The CUDA backend: a pipeline::Reconstructor that keeps H and v_ref resident on one GPU and moves
// only measurements up and images down, straight from and into the FramePool's pinned slots.
//
//   - Single frames go to a persistent kernel (mode kPersistent, or kAuto for matrices small
//     enough that launches dominate): one block polls a mailbox in mapped host memory, relays the
//     frame to the others through device memory, every block writes its image rows to host memory
//     with 16-byte stores and the last one raises a done flag. No launch per frame. It backs off
//     (sleeps on the GPU) when idle and exits after a longer idle spell; the next frame restarts
//     it.
//   - Batches (frames that queued up) go to one gather/subtract/normalise kernel, one cuBLAS GEMM
//     and one copy-engine transfer (or scatter kernel) on one of max_in_flight streams, with the
//     values and descriptors brought up by copy-engine transfers when the slots are in pool
//     order (the cuBLAS path then reads no host memory by zero-copy loads); the last
//     kernel writes a completion word the host polls; completion is in submission order.
//   - Per-frame CUDA errors become pipeline::BackendError naming the failing call.
//   - Every kernel and every cuBLAS GEMM shape the batched path can use is loaded and run once at
//     set-up (GEMMs run with the batch rounded up to a power of two): under CUDA's lazy module
//     loading, a first launch while the persistent kernel is resident waits for it to exit.
//
// No CUDA header is needed to use this file. Thread rules: as pipeline::Reconstructor (one thread
// calls everything). Set-up (make_cuda_reconstructor, set_reference) allocates device memory and
// throws std::runtime_error / std::invalid_argument with the reason (e.g. H does not fit).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "eit/gpu/precision.hpp"
#include "eit/pipeline/reconstructor.hpp"
#include "eit/recon/model.hpp"

namespace eit::gpu {

// True when the CUDA runtime finds a usable device; false with the reason otherwise (no driver,
// no device, incompatible driver). Never throws, never aborts.
bool cuda_available(std::string* why = nullptr);

// "NVIDIA H200, sm_90, 132 SMs, 139.8 GiB (137.2 free), driver 13.0, runtime 13.0"; or why not.
std::string cuda_device_description();

struct CudaOptions {
  int device = 0;
  size_t max_batch = 256;    // frames per submit()
  size_t max_in_flight = 4;  // batches pending at once (one CUDA stream each)
  Precision precision = kFloat32;
  // kLaunch: every batch is launched (prepare + rows kernels for one frame; for more, the own
  //   kernel (≤ 8 frames of an L2-resident H) or cuBLAS GEMM).
  // kPersistent: single frames through the persistent kernel, batches launched.
  // kAuto: kPersistent when H ≤ 32 MiB (launch overhead dominates), else kLaunch.
  enum class Mode { kAuto, kLaunch, kPersistent } mode = Mode::kAuto;
  // Which persistent kernel takes single frames: kCluster, one sm_90 thread-block cluster of up
  //   to 16 blocks sharing the frame through distributed shared memory (1024×208 on the H200:
  //   p50 7.3 µs); kRelay, any number of blocks, the frame relayed through device memory (12.6
  //   µs); kAuto, kCluster for models of at most 2048 rows where the device runs it, else kRelay.
  //   kCluster falls back to kRelay where the device cannot run the cluster (stats say which ran).
  enum class PersistentKernel {
    kAuto,
    kCluster,
    kRelay
  } persistent_kernel = PersistentKernel::kAuto;
  // Blocks of the persistent kernel. 0: relay, 32 rows per block, at most one block per SM;
  // cluster, 64 rows per block, at most 16 blocks.
  int persistent_blocks = 0;
  double persistent_idle_exit_ms = 500;  // the persistent kernel exits after this long idle
  // Launched single frames: false = one block prepares the frame, then a rows kernel (two
  // launches); true = one fused kernel in which every block reads the frame over PCIe itself
  // (measured slower on the H200: docs/gpu-notes.md).
  bool fuse_single_frame = false;
  // The rows kernel of a launched, unfused single frame: launch_blocks, the blocks H's rows are
  //   split over; launch_rows_per_warp, 4 or 8 rows a warp takes at once (8 keeps twice the
  //   loads in flight). 0: automatic, i.e. for H > 32 MiB in float32 8 rows per warp in blocks
  //   of whole 64-row passes, one wave of blocks where ≤ 4 passes per block allow it (H200:
  //   20,000×928 p50 35.1 µs against 42.2; 200,000×928 183.6 against 208.6); in bf16/fp16 4
  //   rows per warp, blocks of 64 rows; for smaller H 4 rows per warp, 32 rows per block, at
  //   most 4 blocks per SM (docs/gpu-notes.md, run 14).
  int launch_blocks = 0;
  int launch_rows_per_warp = 0;
  // Batches of up to this many frames use the backend's own kernel (H read per frame, from L2)
  // instead of cuBLAS GEMM + copy engine. 0: automatic (64 MiB ÷ |H| when H fits in 8 MiB, i.e.
  // 78 frames at 1024×208, 19 at 4096×208; else 1). Measured crossover: docs/gpu-notes.md.
  size_t own_kernel_max_batch = 0;
  // cuBLAS-path batches whose values lie evenly spaced in the pool (slots in pool order) bring
  // them up by one copy-engine transfer; false: prepare reads them by zero-copy loads (the
  // behaviour before issue 9's run 10, kept for the benchmark's comparison).
  bool stage_batch_values = true;
  // With staged values, also bring the batch's frame descriptors up by a copy-engine transfer;
  // false: prepare reads each one (32 bytes) by a zero-copy load. Run 11 on the H200 (1024×208,
  // batch 1024): 12.5 M frames/s (93 % of the PCIe bound) against 9.9 M (docs/gpu-notes.md).
  bool stage_batch_descriptors = true;
  // H larger than 32 MiB (launched per frame): keep as much of it as the device allows in the
  // persisting part of L2 (an access-policy window on every launch stream), so each frame reads
  // that part from L2 instead of HBM; only where that is at least half of H (H200: H up to 75
  // MiB; 20,000×928 float32 p50 37.2 → 31.9 µs; keeping 5 % of a larger H made it slower).
  // false: H streams from HBM every frame.
  bool l2_persist = true;
};

// A "gn" model (absolute imaging) gets the Gauss–Newton reconstructor instead: CudaGaussNewton
// (cuda_gauss_newton.hpp) behind pipeline::GnReconstructor's warm-started streaming, host frame
// memory (the frame goes up once per solve), name() "cuda-gn"; the rest of this comment is about
// difference imaging.
// Uploads H (and v_ref when the model has one; otherwise call set_reference before submitting).
// Throws when there is no device, or when H does not fit in the device's free memory (the message
// gives both sizes). Frames must live in a FramePool built from the reconstructor's
// frame_allocator() (page-locked, device-mapped memory it owns) and bound with bind_frames();
// the GPU then reads and writes the slots in place. The reconstructor outlives that pool.
std::unique_ptr<pipeline::Reconstructor> make_cuda_reconstructor(const recon::Model& model,
                                                                 const CudaOptions& options = {});

// What a CUDA reconstructor has done so far (benchmarks, tests); all zero for other backends.
// Not for the per-frame path (queries the persistent kernel's stream).
struct CudaStats {
  uint64_t persistent_frames = 0;  // single frames through the persistent kernel
  uint64_t launched_batches = 0;   // batches launched (fused single-frame kernel or GEMM)
  uint64_t launched_frames = 0;
  uint64_t persistent_launches = 0;  // times the persistent kernel was started
  bool persistent_enabled = false;   // the mode routes single frames to the persistent kernel
  bool persistent_resident = false;  // the persistent kernel is on the GPU right now
  int persistent_blocks = 0;
  bool persistent_cluster = false;  // the persistent kernel is the one-cluster kernel
  std::string batch_fallback;  // why batches use the own kernel instead of cuBLAS; empty if not
  uint64_t copy_engine_batches = 0;  // batches whose images came down in one DMA transfer
  uint64_t staged_batches = 0;       // batches whose values went up in one DMA transfer
  int launch_blocks = 0;             // the launched single-frame rows kernel's shape
  int launch_rows_per_warp = 0;
  size_t l2_persisting_bytes = 0;  // L2 set aside for H (CudaOptions::l2_persist); 0: none
  size_t l2_window_bytes = 0;      // H's bytes under the access-policy window
  float l2_hit_ratio = 0;          // the window's share of lines kept persisting
  // The device's largest persisting-L2 set-aside and access-policy window (0: none), where the
  // backend looked (l2_persist and H > 32 MiB).
  size_t l2_device_max_persisting = 0, l2_device_max_window = 0;
};
CudaStats cuda_stats(const pipeline::Reconstructor& reconstructor);

}  // namespace eit::gpu
