// LaunchLane: resources and the launch sequence of one stream (see launch_lane.hpp).
#include "launch_lane.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "cuda_check.hpp"
#include "eit/pipeline/backoff.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/reconstructor.hpp"
#include "frame_kernels.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace eit::gpu {
namespace {
constexpr int64_t kSpinBeforeBackoffNs = 2'000'000;

template <typename T>
T* host_mapped(size_t count, T** dev, unsigned extra_flags = 0) {
  void* p = nullptr;
  EIT_CUDA(cudaHostAlloc(&p, count * sizeof(T),
                         cudaHostAllocMapped | cudaHostAllocPortable | extra_flags));
  EIT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(dev), p, 0));
  return static_cast<T*>(p);
}
}  // namespace

LaunchLane::LaunchLane(const LaneShape& shape) : shape_(shape) {
  const size_t ld = shape.model.ld, n = shape.max_batch;
  EIT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  if (shape.l2) shape.l2->apply(stream_);  // before cuBLAS: its kernels run on this stream too
  EIT_CUBLAS(cublasCreate(&blas_));
  EIT_CUBLAS(cublasSetStream(blas_, stream_));
  // Default math: float32 GEMMs stay float32 (TF32 only with CUBLAS_TF32_TENSOR_OP_MATH).
  EIT_CUBLAS(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH));
  EIT_CUDA(cudaMalloc(&counter_, sizeof(uint32_t)));
  EIT_CUDA(cudaMemset(counter_, 0, sizeof(uint32_t)));
  done_ = host_mapped<uint64_t>(1, &done_dev_);
  *done_ = 0;
  EIT_CUDA(cudaMalloc(&d_dv_, ld * n * sizeof(float)));    // float32 for the own batch kernel
  EIT_CUDA(cudaMemset(d_dv_, 0, ld * n * sizeof(float)));  // columns past a batch: finite zeros
  EIT_CUDA(cudaMalloc(&d_dv1_, ld * sizeof(float)));
  EIT_CUDA(cudaMalloc(&d_images_, n * sizeof(float*)));
  if (shape.stage_ld > 0) EIT_CUDA(cudaMalloc(&d_values_, shape.stage_ld * n * sizeof(float)));
  if (shape.stage_ld > 0 && shape.stage_descs)
    EIT_CUDA(cudaMalloc(&d_descs_, n * sizeof(FrameDesc)));
  EIT_CUDA(cudaMalloc(&d_img_, static_cast<size_t>(shape.ld_img) * n * sizeof(float)));
  EIT_CUDA(cudaMemset(d_img_, 0, static_cast<size_t>(shape.ld_img) * n * sizeof(float)));
  // Write-combined: the host only writes descriptors (streaming stores, no read-for-ownership of
  // lines the GPU just read) and the GPU reads them over PCIe without snooping the CPU's caches.
  descs_ = host_mapped<FrameDesc>(n, &descs_dev_, cudaHostAllocWriteCombined);
  status_ = host_mapped<uint32_t>(n, &status_dev_);
}

LaunchLane::~LaunchLane() {
  if (stream_) cudaStreamSynchronize(stream_);
  if (status_) cudaFreeHost(status_);
  if (descs_) cudaFreeHost(descs_);
  if (d_img_) cudaFree(d_img_);
  if (d_dv_) cudaFree(d_dv_);
  if (d_dv1_) cudaFree(d_dv1_);
  if (d_images_) cudaFree(d_images_);
  if (d_values_) cudaFree(d_values_);
  if (d_descs_) cudaFree(d_descs_);
  if (blas_) cublasDestroy(blas_);
  if (done_) cudaFreeHost(done_);
  if (counter_) cudaFree(counter_);
  if (stream_) cudaStreamDestroy(stream_);
}

size_t LaunchLane::gemm_columns(size_t n) const noexcept {
  size_t c = 1;
  while (c < n) c *= 2;
  return std::min(c, shape_.max_batch);
}

bool LaunchLane::run(size_t n, const FrameDesc& first, float* image_base, size_t pitch_bytes,
                     const float* values_base, size_t values_pitch) {
  const DeviceModel& m = shape_.model;
  if (n > 1) {
    // prepare writes the status of bad frames only. Then: descriptor stores (write-combined
    // memory) and the zeroed status words are visible before the launch that reads them.
    std::memset(status_, 0, n * sizeof(uint32_t));
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  const Completion c{counter_, done_dev_, ++seq_};
  if (n == 1) {
    if (shape_.single_fused) {
      launch_single_frame(shape_.precision, m, first, shape_.single_blocks, status_dev_, c,
                          stream_);
    } else {
      launch_prepare_one(m, first, d_dv1_, status_dev_, stream_);
      launch_rows(shape_.precision, m, d_dv1_, first.image, shape_.single_rows, c, stream_);
    }
  } else {
    const int b = static_cast<int>(n);
    if (own_batch_kernel_ || n <= shape_.own_kernel_max_batch) {
      launch_prepare(kFloat32, m, descs_dev_, b, d_dv_, status_dev_, d_images_, stream_);
      launch_batch_rows(shape_.precision, m, static_cast<const float*>(d_dv_), d_images_, b,
                        shape_.single_blocks, c, stream_);
      return false;
    }
    bool staged = false;
    if (d_values_ && values_base && values_pitch <= shape_.stage_ld) {
      // One copy-engine transfer up instead of ~26 zero-copy sector reads per frame, whose
      // requests share the device→host link with the images (docs/gpu-notes.md, run 10).
      const size_t floats = (n - 1) * values_pitch + static_cast<size_t>(m.n_meas);
      EIT_CUDA(cudaMemcpyAsync(d_values_, values_base, floats * sizeof(float),
                               cudaMemcpyHostToDevice, stream_));
      const FrameDesc* descs = descs_dev_;
      if (d_descs_) {
        EIT_CUDA(cudaMemcpyAsync(d_descs_, descs_, n * sizeof(FrameDesc), cudaMemcpyHostToDevice,
                                 stream_));
        descs = d_descs_;
      }
      launch_prepare(shape_.precision, m, descs, b, d_dv_, status_dev_, d_images_, stream_,
                     d_values_, static_cast<int>(values_pitch));
      staged = true;
    } else {
      launch_prepare(shape_.precision, m, descs_dev_, b, d_dv_, status_dev_, d_images_, stream_);
    }
    gemm(static_cast<int>(gemm_columns(n)));
    if (image_base && pitch_bytes == shape_.ld_img * sizeof(float)) {
      // Same layout as the device buffer: one linear transfer (padding between images included)
      // instead of one 2-D row per image (docs/gpu-notes.md, run 7).
      const size_t bytes = ((n - 1) * shape_.ld_img + m.n_out) * sizeof(float);
      EIT_CUDA(cudaMemcpyAsync(image_base, d_img_, bytes, cudaMemcpyDeviceToHost, stream_));
      launch_signal(c, stream_);
    } else if (image_base) {
      EIT_CUDA(cudaMemcpy2DAsync(image_base, pitch_bytes, d_img_, shape_.ld_img * sizeof(float),
                                 m.n_out * sizeof(float), n, cudaMemcpyDeviceToHost, stream_));
      launch_signal(c, stream_);
    } else {
      launch_scatter(d_img_, m.n_out, shape_.ld_img, d_images_, b, c, stream_);
    }
    return staged;
  }
  return false;
}

void LaunchLane::gemm(int b) {
  const DeviceModel& m = shape_.model;
  const float one = 1.f, zero = 0.f;
  if (shape_.precision == kFloat32) {
    EIT_CUBLAS(cublasSgemm(blas_, CUBLAS_OP_T, CUBLAS_OP_N, m.n_out, b, m.n_meas, &one,
                           static_cast<const float*>(m.H), m.ld, static_cast<const float*>(d_dv_),
                           m.ld, &zero, d_img_, shape_.ld_img));
  } else {
    const cudaDataType t = shape_.precision == kBf16 ? CUDA_R_16BF : CUDA_R_16F;
    EIT_CUBLAS(cublasGemmEx(blas_, CUBLAS_OP_T, CUBLAS_OP_N, m.n_out, b, m.n_meas, &one, m.H, t,
                            m.ld, d_dv_, t, m.ld, &zero, d_img_, CUDA_R_32F, shape_.ld_img,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
}

void LaunchLane::warm_up() {
  for (size_t b = 1; b <= shape_.max_batch; b *= 2) {
    const size_t c = gemm_columns(b);
    if (c >= 2) gemm(static_cast<int>(c));
    if (c == shape_.max_batch) break;
  }
  gemm(static_cast<int>(gemm_columns(shape_.max_batch)));
  EIT_CUDA(cudaStreamSynchronize(stream_));
}

bool LaunchLane::ready(bool wait) {
  const int64_t t0 = wait ? pipeline::now_ns() : 0;
  pipeline::Backoff backoff;
  for (;;) {
    if (*static_cast<volatile uint64_t*>(done_) >= seq_) {
      std::atomic_thread_fence(std::memory_order_acquire);
      return true;
    }
    if ((++polls_ & 1023) == 0) {  // now and then: did the stream fail, or end without signal?
      const cudaError_t s = cudaStreamQuery(stream_);
      if (s == cudaSuccess && *static_cast<volatile uint64_t*>(done_) < seq_)
        throw pipeline::BackendError(
            "CUDA backend: batch finished on the GPU without writing its completion word");
      if (s != cudaSuccess && s != cudaErrorNotReady)
        check_cuda(s, "cudaStreamQuery(batch stream)");
    }
    if (!wait) return false;
    if (pipeline::now_ns() - t0 < kSpinBeforeBackoffNs) {
#if defined(__x86_64__) || defined(__i386__)
      _mm_pause();
#endif
    } else {
      backoff.pause();
    }
  }
}

}  // namespace eit::gpu
