// LaunchLane: resources and the launch sequence of one stream (see launch_lane.hpp).
#include "launch_lane.hpp"

#include "cuda_check.hpp"
#include "eit/pipeline/backoff.hpp"
#include "eit/pipeline/clock.hpp"
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
  EIT_CUDA(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
  EIT_CUBLAS(cublasCreate(&blas_));
  EIT_CUBLAS(cublasSetStream(blas_, stream_));
  EIT_CUBLAS(cublasSetMathMode(blas_, CUBLAS_PEDANTIC_MATH));  // float32 means float32: no TF32
  EIT_CUDA(cudaMalloc(&d_dv_, ld * n * element_bytes(shape.precision)));
  EIT_CUDA(cudaMalloc(&d_dv1_, ld * sizeof(float)));
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
  if (blas_) cublasDestroy(blas_);
  if (event_) cudaEventDestroy(event_);
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

void LaunchLane::run(size_t n) {
  const DeviceModel& m = shape_.model;
  if (n == 1) {
    if (shape_.single_fused) {
      launch_single_frame(shape_.precision, m, descs_[0], shape_.single_blocks, status_dev_,
                          stream_);
    } else {
      launch_prepare_one(m, descs_[0], d_dv1_, status_dev_, stream_);
      launch_rows(shape_.precision, m, d_dv1_, descs_[0].image, shape_.single_blocks, stream_);
    }
  } else {
    const int b = static_cast<int>(n);
    launch_prepare(shape_.precision, m, descs_dev_, b, d_dv_, status_dev_, stream_);
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
    launch_scatter(d_img_, m.n_out, shape_.ld_img, descs_dev_, b, stream_);
  }
  EIT_CUDA(cudaEventRecord(event_, stream_));
}

bool LaunchLane::ready(bool wait) {
  const int64_t t0 = wait ? pipeline::now_ns() : 0;
  pipeline::Backoff backoff;
  for (;;) {
    const cudaError_t s = cudaEventQuery(event_);
    if (s == cudaSuccess) return true;
    if (s != cudaErrorNotReady) check_cuda(s, "cudaEventQuery(batch done)");
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
