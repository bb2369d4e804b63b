// LaunchLane: resources and the launch sequence of one stream (see launch_lane.hpp).
#include "launch_lane.hpp"

#include <algorithm>
#include <atomic>

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
T* host_mapped(size_t count, T** dev) {
  void* p = nullptr;
  EIT_CUDA(cudaHostAlloc(&p, count * sizeof(T), cudaHostAllocMapped | cudaHostAllocPortable));
  EIT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(dev), p, 0));
  return static_cast<T*>(p);
}
}  // namespace

LaunchLane::LaunchLane(const LaneShape& shape) : shape_(shape) {
  const size_t ld = shape.model.ld, n = shape.max_batch;
  EIT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  EIT_CUBLAS(cublasCreate(&blas_));
  EIT_CUBLAS(cublasSetStream(blas_, stream_));
  // Default math: float32 GEMMs stay float32 (TF32 only with CUBLAS_TF32_TENSOR_OP_MATH).
  EIT_CUBLAS(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH));
  EIT_CUDA(cudaMalloc(&counter_, sizeof(uint32_t)));
  EIT_CUDA(cudaMemset(counter_, 0, sizeof(uint32_t)));
  done_ = host_mapped<uint64_t>(1, &done_dev_);
  *done_ = 0;
  EIT_CUDA(cudaMalloc(&d_dv_, ld * n * sizeof(float)));  // float32 for the own batch kernel
  EIT_CUDA(cudaMalloc(&d_dv1_, ld * sizeof(float)));
  EIT_CUDA(cudaMalloc(&d_images_, n * sizeof(float*)));
  EIT_CUDA(cudaMalloc(&d_img_, static_cast<size_t>(shape.ld_img) * n * sizeof(float)));
  descs_ = host_mapped<FrameDesc>(n, &descs_dev_);
  status_ = host_mapped<uint32_t>(n, &status_dev_);
  if (shape.staging) {
    stage_values_ = host_mapped<float>(ld * n, &stage_values_dev_);
    stage_image_ = host_mapped<float>(static_cast<size_t>(shape.ld_img) * n, &stage_image_dev_);
  }
}

LaunchLane::~LaunchLane() {
  if (stream_) cudaStreamSynchronize(stream_);
  if (stage_image_) cudaFreeHost(stage_image_);
  if (stage_values_) cudaFreeHost(stage_values_);
  if (status_) cudaFreeHost(status_);
  if (descs_) cudaFreeHost(descs_);
  if (d_img_) cudaFree(d_img_);
  if (d_dv_) cudaFree(d_dv_);
  if (d_dv1_) cudaFree(d_dv1_);
  if (d_images_) cudaFree(d_images_);
  if (blas_) cublasDestroy(blas_);
  if (done_) cudaFreeHost(done_);
  if (counter_) cudaFree(counter_);
  if (stream_) cudaStreamDestroy(stream_);
}

float* LaunchLane::staged_values(size_t i) noexcept {
  return stage_values_ ? stage_values_ + i * shape_.model.ld : nullptr;
}
float* LaunchLane::staged_image(size_t i) noexcept {
  return stage_image_ ? stage_image_ + i * shape_.ld_img : nullptr;
}
const float* LaunchLane::staged_values_dev(size_t i) const noexcept {
  return stage_values_dev_ + i * shape_.model.ld;
}
float* LaunchLane::staged_image_dev(size_t i) const noexcept {
  return stage_image_dev_ + i * shape_.ld_img;
}

void LaunchLane::run(size_t n, float* image_base, size_t pitch_bytes) {
  const DeviceModel& m = shape_.model;
  const Completion c{counter_, done_dev_, ++seq_};
  if (n == 1) {
    if (shape_.single_fused) {
      launch_single_frame(shape_.precision, m, descs_[0], shape_.single_blocks, status_dev_, c,
                          stream_);
    } else {
      launch_prepare_one(m, descs_[0], d_dv1_, status_dev_, stream_);
      launch_rows(shape_.precision, m, d_dv1_, descs_[0].image, shape_.single_blocks, c, stream_);
    }
  } else {
    const int b = static_cast<int>(n);
    if (own_batch_kernel_ || n <= shape_.own_kernel_max_batch) {
      launch_prepare(kFloat32, m, descs_dev_, b, d_dv_, status_dev_, d_images_, stream_);
      launch_batch_rows(shape_.precision, m, static_cast<const float*>(d_dv_), d_images_, b,
                        shape_.single_blocks, c, stream_);
      return;
    }
    launch_prepare(shape_.precision, m, descs_dev_, b, d_dv_, status_dev_, d_images_, stream_);
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
    if (image_base) {
      EIT_CUDA(cudaMemcpy2DAsync(image_base, pitch_bytes, d_img_, shape_.ld_img * sizeof(float),
                                 m.n_out * sizeof(float), n, cudaMemcpyDeviceToHost, stream_));
      launch_signal(c, stream_);
    } else {
      launch_scatter(d_img_, m.n_out, shape_.ld_img, d_images_, b, c, stream_);
    }
  }
}

void LaunchLane::warm_up() {
  const DeviceModel& m = shape_.model;
  const float one = 1.f, zero = 0.f;
  for (size_t b = 2;; b = std::min(2 * b, shape_.max_batch)) {
    if (b > shape_.max_batch) break;
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
    if (b == shape_.max_batch) break;
  }
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
