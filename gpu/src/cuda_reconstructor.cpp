// CudaReconstructor: set-up (fit check, upload, lanes, persistent engine) and the per-frame path.
#include "cuda_reconstructor.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "cuda_gn_backend.hpp"
#include "eit/pipeline/frame_pool.hpp"
#include "frame_kernels.hpp"

namespace eit::gpu {
namespace {

constexpr double kMiB = 1024.0 * 1024.0, kGiB = kMiB * 1024.0;
// kAuto sends single frames to the persistent kernel when H is at most this large: beyond it
// the product itself (HBM-bound) dwarfs the launch it saves (docs/gpu-notes.md).
constexpr size_t kAutoPersistentMaxBytes = size_t{32} << 20;
// kAuto takes the one-cluster persistent kernel up to this many rows: 16 blocks of 128 rows.
constexpr int kAutoClusterMaxRows = 2048;
// Batches of a matrix that stays in L2 go to the own kernel (H read once per frame from L2) while
// batch × |H| ≤ 64 MiB; larger ones to cuBLAS + copy engine. Run 7 (docs/gpu-notes.md) measured
// the cuBLAS path with a floor of ~36 µs per batch, so the own kernel wins up to 54 MB of H reads
// per batch (1024×208 at 64 frames: 2.32 M vs 1.63 M frames/s; 4096×208 at 16: 0.69 M vs 0.60 M)
// and loses from 218 MB (1024×208 at 256: 3.0 M vs 6.4 M; 4096×208 at 64: 0.82 M vs 2.05 M).
constexpr size_t kOwnKernelMaxBytes = size_t{8} << 20;
constexpr size_t kOwnKernelMaxBatchBytes = size_t{64} << 20;
constexpr size_t kPerLaneReserveBytes = size_t{64} << 20;  // cuBLAS handle and workspace
constexpr size_t kMarginBytes = size_t{128} << 20;
constexpr int kRowsPerWarpGroup = 32;  // 8 warps × 4 rows

const char* precision_name(Precision p) {
  return p == kFloat32 ? "float32" : p == kBf16 ? "bf16" : "fp16";
}

// Floats per frame of a lane's values staging buffer: the FramePool's slot stride (64-byte
// multiples), so a batch of slots in pool order is one contiguous transfer.
size_t stage_ld(size_t n_meas) { return (n_meas + 15) / 16 * 16; }

// Validates the options, selects the device and checks that everything fits in its memory.
CudaOptions checked(const recon::Model& model, const CudaOptions& o) {
  std::string why;
  if (!cuda_available(&why)) throw std::runtime_error("CUDA backend: no usable device: " + why);
  if (o.launch_blocks < 0 ||
      (o.launch_rows_per_warp != 0 && o.launch_rows_per_warp != 4 && o.launch_rows_per_warp != 8))
    throw std::invalid_argument(fmt::format(
        "CUDA backend: launch_blocks = {} (must be >= 0), launch_rows_per_warp = {} (must be 0, "
        "4 or 8)",
        o.launch_blocks, o.launch_rows_per_warp));
  if (o.max_batch == 0 || o.max_in_flight == 0)
    throw std::invalid_argument(
        fmt::format("CUDA backend: max_batch = {}, max_in_flight = {}; both must be >= 1",
                    o.max_batch, o.max_in_flight));
  EIT_CUDA(cudaSetDevice(o.device));
  cudaDeviceProp prop{};
  EIT_CUDA(cudaGetDeviceProperties(&prop, o.device));
  const size_t n_out = model.n_out(), n_meas = model.n_meas();
  const size_t ld = DeviceMatrix::padded_ld(n_meas), ld_img = (n_out + 3) / 4 * 4;
  const size_t eb = element_bytes(o.precision);
  const double h_bytes = double(n_out) * ld * eb;
  const double stage_bytes =
      o.stage_batch_values ? stage_ld(n_meas) * 4.0 + sizeof(FrameDesc) : 0.0;
  const double lane_bytes = double(o.max_batch) * (ld * eb + ld_img * 4.0 + stage_bytes) +
                            ld * 4.0 + kPerLaneReserveBytes;
  const double need = h_bytes + o.max_in_flight * lane_bytes +
                      std::min(64 * kMiB, double(n_out) * n_meas * 4) + kMarginBytes;
  size_t free_bytes = 0, total_bytes = 0;
  EIT_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need > double(free_bytes))
    throw std::runtime_error(fmt::format(
        "CUDA backend: H ({} × {} {}, {:.2f} GiB) plus buffers for {} batches of {} frames "
        "({:.2f} GiB) need {:.2f} GiB, but device {} ({}) has {:.2f} GiB free of {:.2f} GiB; "
        "use a smaller model, bf16/fp16, or a smaller max_batch / max_in_flight",
        n_out, n_meas, precision_name(o.precision), h_bytes / kGiB, o.max_in_flight, o.max_batch,
        o.max_in_flight * lane_bytes / kGiB, need / kGiB, o.device, prop.name, free_bytes / kGiB,
        total_bytes / kGiB));
  return o;
}

// The rows kernel of launched single frames (CudaOptions::launch_blocks, launch_rows_per_warp).
// A large H streams from HBM, and a warp must keep enough of it in flight. float32: 8 rows per
// warp, in blocks of whole passes (8 warps × 8 rows) so that no warp idles while another does a
// second pass; one wave of resident blocks when at most 4 passes per block achieve it, else
// single passes (many waves: the last one's tail is short). bf16/fp16 (8 elements per 16-byte
// load): 4 rows per warp in blocks of 64 rows. Run 14 on the H200, docs/gpu-notes.md.
RowsShape launched_rows_shape(const DeviceModel& m, size_t h_bytes, int sms, int small_blocks,
                              const CudaOptions& o) {
  const bool large = h_bytes > kAutoPersistentMaxBytes;  // the automatic mode launches it
  RowsShape shape{};
  shape.rows_per_warp = o.launch_rows_per_warp;
  if (shape.rows_per_warp == 0) shape.rows_per_warp = large && o.precision == kFloat32 ? 8 : 4;
  if (o.launch_blocks > 0) {
    shape.blocks = std::min(o.launch_blocks, (m.n_out + 3) / 4);
    return shape;
  }
  if (!large) {
    shape.blocks = small_blocks;
    return shape;
  }
  int rows = 64;  // per block
  if (shape.rows_per_warp == 8) {
    const int pass = kThreads / 32 * 8;
    // Shared memory as for the largest block considered (4 passes).
    const int resident =
        sms * rows_kernel_blocks_per_sm(o.precision, 8, (m.ld + 4 * pass) * sizeof(float));
    const int passes = (m.n_out + pass * resident - 1) / (pass * resident);
    rows = pass * (passes <= 4 ? passes : 1);
  }
  shape.blocks = (m.n_out + rows - 1) / rows;
  return shape;
}

int sm_count(int device) {
  int n = 0;
  EIT_CUDA(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  return n;
}

}  // namespace

CudaReconstructor::CudaReconstructor(const recon::Model& model, const CudaOptions& options)
    : options_(checked(model, options)), matrix_(model.H, options.precision) {
  const DeviceModel& m = matrix_.model();
  const int sms = sm_count(options_.device);
  int smem_optin = 0;
  EIT_CUDA(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                  options_.device));

  LaneShape shape{};
  shape.precision = options_.precision;
  shape.model = m;
  shape.max_batch = options_.max_batch;
  // Device images are laid out like the FramePool's (64-byte slot stride), so a batch of slots in
  // pool order comes down in one linear copy.
  shape.ld_img = (m.n_out + 15) / 16 * 16;
  const int groups = (m.n_out + kRowsPerWarpGroup - 1) / kRowsPerWarpGroup;
  shape.single_fused = options_.fuse_single_frame && groups <= sms;  // every block reads v
  shape.single_blocks = std::min(groups, shape.single_fused ? sms : 4 * sms);
  const size_t h_bytes = size_t(m.n_out) * m.ld * element_bytes(options_.precision);
  shape.stage_ld = options_.stage_batch_values ? stage_ld(static_cast<size_t>(m.n_meas)) : 0;
  shape.stage_descs = options_.stage_batch_descriptors;
  shape.own_kernel_max_batch = options_.own_kernel_max_batch > 0 ? options_.own_kernel_max_batch
                               : h_bytes <= kOwnKernelMaxBytes
                                   ? std::max<size_t>(1, kOwnKernelMaxBatchBytes / h_bytes)
                                   : 1;

  shape.single_rows = launched_rows_shape(m, h_bytes, sms, shape.single_blocks, options_);
  stats_.launch_blocks = shape.single_rows.blocks;
  stats_.launch_rows_per_warp = shape.single_rows.rows_per_warp;
  const int widest_rows = std::max(rows_per_block(m.n_out, shape.single_blocks),
                                   rows_per_block(m.n_out, shape.single_rows.blocks));
  const size_t smem = (m.ld + widest_rows) * sizeof(float);
  if (smem > static_cast<size_t>(smem_optin))
    throw std::invalid_argument(fmt::format(
        "CUDA backend: {} measurements and blocks of {} rows need {} bytes of shared memory "
        "per block; the device allows {} (fewer rows per block: a larger launch_blocks)",
        m.n_meas, widest_rows, smem, smem_optin));
  set_frame_kernels_smem_limit(smem);  // also loads every launched-path kernel now

  // An H that does not stay in L2 by itself: part of it kept there (l2_residency.hpp).
  if (options_.l2_persist && h_bytes > kAutoPersistentMaxBytes) {
    l2_ = std::make_unique<L2Residency>(options_.device, m.H, h_bytes);
    if (l2_->active()) shape.l2 = l2_.get();
    stats_.l2_persisting_bytes = l2_->persisting_bytes();
    stats_.l2_window_bytes = l2_->window_bytes();
    stats_.l2_hit_ratio = l2_->hit_ratio();
    stats_.l2_device_max_persisting = l2_->device_max_persisting();
    stats_.l2_device_max_window = l2_->device_max_window();
  }
  for (size_t i = 0; i < options_.max_in_flight; ++i)
    lanes_.push_back(std::make_unique<LaunchLane>(shape));
  try {
    // Every lane (own cuBLAS handle) runs every GEMM shape it will use, before the persistent
    // kernel can be resident: a lazily loaded kernel would otherwise wait for it to exit.
    for (auto& lane : lanes_) lane->warm_up();
  } catch (const pipeline::BackendError& e) {
    // cuBLAS cannot run here: batches use the backend's own kernel (slower for large batches).
    if (cudaGetLastError() != cudaSuccess) throw;  // a sticky CUDA error: nothing would work
    for (auto& lane : lanes_) lane->use_own_batch_kernel();
    stats_.batch_fallback = e.what();
  }
  ring_.resize(options_.max_in_flight);
  for (Pending& p : ring_) p.frames.resize(options_.max_batch);

  const bool persistent =
      m.n_meas <= persistent_max_meas() &&
      (options_.mode == CudaOptions::Mode::kPersistent ||
       (options_.mode == CudaOptions::Mode::kAuto && matrix_.h_bytes() <= kAutoPersistentMaxBytes));
  if (persistent) {
    // Relay: 32 rows per block, at most one block per SM: measured best on the H200 for 1024×208
    // (32 blocks: p50 12.7 µs, paced p99 16 µs; 128 blocks: same p50 but paced p99 49 µs) and for
    // 4096×208 (128 blocks: p50 13.0 µs; 32 blocks: 25 µs). Cluster: 64 rows per block (8 warps ×
    // 8 rows, one L2 round trip at 208 columns), up to 16 blocks. docs/gpu-notes.md.
    using Kernel = CudaOptions::PersistentKernel;
    const bool cluster =
        options_.persistent_kernel == Kernel::kCluster ||
        (options_.persistent_kernel == Kernel::kAuto && m.n_out <= kAutoClusterMaxRows);
    const int relay_blocks =
        options_.persistent_blocks > 0 ? options_.persistent_blocks : std::min(groups, sms);
    const int cluster_blocks = !cluster ? 0
                               : options_.persistent_blocks > 0
                                   ? std::min(options_.persistent_blocks, kMaxClusterBlocks)
                                   : std::clamp((m.n_out + 63) / 64, 1, kMaxClusterBlocks);
    persistent_ = std::make_unique<PersistentEngine>(
        options_.precision, m, std::min(relay_blocks, groups * 8), cluster_blocks,
        options_.persistent_idle_exit_ms);
  }
  if (model.v_ref.size() > 0)
    matrix_.set_reference(std::span<const double>(model.v_ref.data(), model.v_ref.size()),
                          model.normalize);
}

CudaReconstructor::~CudaReconstructor() {
  if (persistent_) persistent_->stop();
}

void CudaReconstructor::activate_device() const {
  if (options_.device != 0) EIT_CUDA(cudaSetDevice(options_.device));
}

void CudaReconstructor::set_reference(std::span<const double> v_ref, bool normalize) {
  if (count_ != 0)
    throw std::logic_error(fmt::format(
        "CUDA backend: set_reference with {} batches in flight; complete them first", count_));
  activate_device();
  matrix_.set_reference(v_ref, normalize);
}

void CudaReconstructor::bind_frames(const pipeline::FramePool& pool) {
  if (count_ != 0)
    throw std::logic_error(fmt::format(
        "CUDA backend: bind_frames with {} batches in flight; complete them first", count_));
  if (pool.n_values() != n_meas() || pool.n_image() != n_out())
    throw std::invalid_argument(fmt::format(
        "CUDA backend: FramePool slots hold {} values and {} image floats; the model has {} "
        "measurements and {} image elements",
        pool.n_values(), pool.n_image(), n_meas(), n_out()));
  const size_t values_bytes = pool.size() * pool.values_stride() * sizeof(float);
  const size_t image_bytes = pool.size() * pool.image_stride() * sizeof(float);
  MappedRange v, im;
  if (!frames_.find(pool.values_base(), values_bytes, v) ||
      !frames_.find(pool.image_base(), image_bytes, im))
    throw std::invalid_argument(fmt::format(
        "CUDA backend: the FramePool's memory (allocator '{}') is not from this reconstructor's "
        "frame_allocator(); build the pool with reconstructor.frame_allocator()",
        pool.allocator().name()));
  values_ = v;
  images_ = im;
}

FrameDesc CudaReconstructor::describe(const pipeline::FrameSlot& frame) const {
  const size_t values_bytes = n_meas() * sizeof(float), image_bytes = n_out() * sizeof(float);
  if (!values_.contains(frame.values, values_bytes) || !images_.contains(frame.image, image_bytes))
    throw pipeline::BackendError(fmt::format(
        "CUDA backend: frame {} is not in the FramePool bound with bind_frames(); build the pool "
        "from frame_allocator() and bind it before submitting",
        frame.seq));
  FrameDesc d{};
  d.flags = (frame.flags & pipeline::kFlagNonFinite) ? kBadFrame : 0u;
  d.values = values_.device(static_cast<const float*>(frame.values));
  d.image = images_.device(frame.image);
  return d;
}

bool CudaReconstructor::submit(std::span<pipeline::FrameSlot* const> batch) {
  if (batch.empty() || batch.size() > options_.max_batch)
    throw pipeline::BackendError(fmt::format("CUDA backend: submit of {} frames; expected 1 to {}",
                                             batch.size(), options_.max_batch));
  if (!matrix_.has_reference())
    throw pipeline::BackendError("CUDA backend: submit before any reference was set");
  if (count_ == options_.max_in_flight) return false;
  activate_device();
  const size_t slot = (head_ + count_) % ring_.size();
  Pending& p = ring_[slot];
  LaunchLane& lane = *lanes_[slot];
  p.n = batch.size();
  std::copy(batch.begin(), batch.end(), p.frames.begin());
  const FrameDesc first = describe(*batch[0]);
  if (batch.size() == 1 && persistent_ && persistent_pending_ < kRing - 1 &&
      reinterpret_cast<uintptr_t>(first.image) % 16 == 0) {
    p.seq =
        persistent_->post(static_cast<const float*>(batch[0]->values), first.image, first.flags);
    p.persistent = true;
    ++persistent_pending_;
    ++stats_.persistent_frames;
  } else {
    FrameDesc* descs = lane.descs();
    if (batch.size() > 1) {
      descs[0] = first;
      for (size_t i = 1; i < batch.size(); ++i) descs[i] = describe(*batch[i]);
    }
    // Images evenly spaced in pinned memory (slots taken in pool order) come down in one DMA;
    // evenly spaced values go up in one (on the cuBLAS path).
    bool even = batch.size() > 1, even_values = even;
    const ptrdiff_t pitch = even ? batch[1]->image - batch[0]->image : 0;
    const ptrdiff_t vpitch = even ? batch[1]->values - batch[0]->values : 0;
    even = even && pitch >= static_cast<ptrdiff_t>(n_out());
    even_values = even_values && vpitch >= static_cast<ptrdiff_t>(n_meas());
    for (size_t i = 2; (even || even_values) && i < batch.size(); ++i) {
      even = even && batch[i]->image - batch[i - 1]->image == pitch;
      even_values = even_values && batch[i]->values - batch[i - 1]->values == vpitch;
    }
    const float* values_base = even_values ? batch[0]->values : nullptr;
    const size_t values_pitch = even_values ? static_cast<size_t>(vpitch) : 0;
    bool staged;
    if (even) {
      staged = lane.run(batch.size(), first, batch[0]->image, pitch * sizeof(float), values_base,
                        values_pitch);
      ++stats_.copy_engine_batches;
    } else {
      staged = lane.run(batch.size(), first, nullptr, 0, values_base, values_pitch);
    }
    if (staged) ++stats_.staged_batches;
    p.persistent = false;
    ++stats_.launched_batches;
    stats_.launched_frames += batch.size();
  }
  ++count_;
  return true;
}

size_t CudaReconstructor::complete(std::span<pipeline::FrameSlot*> out, bool wait) {
  if (count_ == 0) return 0;
  activate_device();
  Pending& p = ring_[head_];
  LaunchLane& lane = *lanes_[head_];
  if (out.size() < p.n)
    throw pipeline::BackendError(fmt::format(
        "CUDA backend: complete() given room for {} frames; the batch has {}", out.size(), p.n));
  if (p.persistent) {
    bool bad = false;
    if (!(wait ? persistent_->wait(p.seq, bad) : persistent_->done(p.seq, bad))) return 0;
    if (bad) p.frames[0]->flags |= pipeline::kFlagNonFinite;
    --persistent_pending_;
  } else {
    if (!lane.ready(wait)) return 0;
    for (size_t i = 0; i < p.n; ++i)
      if (lane.status(i)) p.frames[i]->flags |= pipeline::kFlagNonFinite;
  }
  std::copy(p.frames.begin(), p.frames.begin() + p.n, out.begin());
  head_ = (head_ + 1) % ring_.size();
  --count_;
  return p.n;
}

CudaStats CudaReconstructor::stats() const {
  CudaStats s = stats_;
  s.persistent_enabled = persistent_ != nullptr;
  if (persistent_) {
    s.persistent_launches = persistent_->launches();
    s.persistent_blocks = persistent_->blocks();
    s.persistent_cluster = persistent_->cluster();
    s.persistent_resident = persistent_->resident();
  }
  return s;
}

std::unique_ptr<pipeline::Reconstructor> make_cuda_reconstructor(const recon::Model& model,
                                                                 const CudaOptions& options) {
  if (model.gn) return make_cuda_gn_reconstructor(model, options);  // absolute imaging
  return std::make_unique<CudaReconstructor>(model, options);
}

CudaStats cuda_stats(const pipeline::Reconstructor& reconstructor) {
  if (const auto* r = dynamic_cast<const CudaReconstructor*>(&reconstructor)) return r->stats();
  return {};
}

}  // namespace eit::gpu
