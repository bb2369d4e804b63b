#include "naive_reference.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>

#include <fmt/format.h>

#include "eit/pipeline/clock.hpp"

namespace eit::gpu::bench {
namespace {
void ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}
void ok(cublasStatus_t e, const char* what) {
  if (e != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(fmt::format("{}: {}", what, cublasGetStatusString(e)));
}
}  // namespace

struct NaiveReference::Impl {
  size_t n_out, n_meas, max_batch;
  float *d_H = nullptr, *d_v = nullptr, *d_img = nullptr, *h_v = nullptr, *h_img = nullptr;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cudaGraphExec_t graph = nullptr;

  void enqueue_frame() {
    const float one = 1.f, zero = 0.f;
    ok(cudaMemcpyAsync(d_v, h_v, n_meas * 4, cudaMemcpyHostToDevice, stream), "copy up");
    ok(cublasSgemv(blas, CUBLAS_OP_T, n_meas, n_out, &one, d_H, n_meas, d_v, 1, &zero, d_img, 1),
       "cublasSgemv");
    ok(cudaMemcpyAsync(h_img, d_img, n_out * 4, cudaMemcpyDeviceToHost, stream), "copy down");
  }
};

NaiveReference::NaiveReference(const float* H, size_t n_out, size_t n_meas, size_t max_batch)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.n_out = n_out, m.n_meas = n_meas, m.max_batch = max_batch;
  ok(cudaMalloc(&m.d_H, n_out * n_meas * 4), "cudaMalloc H");
  ok(cudaMemcpy(m.d_H, H, n_out * n_meas * 4, cudaMemcpyHostToDevice), "upload H");
  ok(cudaMalloc(&m.d_v, max_batch * n_meas * 4), "cudaMalloc v");
  ok(cudaMalloc(&m.d_img, max_batch * n_out * 4), "cudaMalloc img");
  ok(cudaHostAlloc(&m.h_v, max_batch * n_meas * 4, 0), "cudaHostAlloc v");
  ok(cudaHostAlloc(&m.h_img, max_batch * n_out * 4, 0), "cudaHostAlloc img");
  ok(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking), "stream");
  ok(cublasCreate(&m.blas), "cublasCreate");
  ok(cublasSetStream(m.blas, m.stream), "cublasSetStream");
  ok(cublasSetMathMode(m.blas, CUBLAS_DEFAULT_MATH), "math mode");
  m.enqueue_frame();  // warm-up outside capture (cuBLAS loads its kernels)
  ok(cudaStreamSynchronize(m.stream), "sync");
  cudaGraph_t g;
  ok(cudaStreamBeginCapture(m.stream, cudaStreamCaptureModeThreadLocal), "capture");
  m.enqueue_frame();
  ok(cudaStreamEndCapture(m.stream, &g), "end capture");
  ok(cudaGraphInstantiate(&m.graph, g, 0), "instantiate");
  cudaGraphDestroy(g);
}

NaiveReference::~NaiveReference() {
  Impl& m = *impl_;
  cudaStreamSynchronize(m.stream);
  cudaGraphExecDestroy(m.graph);
  cublasDestroy(m.blas);
  cudaStreamDestroy(m.stream);
  cudaFreeHost(m.h_img);
  cudaFreeHost(m.h_v);
  cudaFree(m.d_img);
  cudaFree(m.d_v);
  cudaFree(m.d_H);
}

float* NaiveReference::values(size_t i) { return impl_->h_v + i * impl_->n_meas; }
float* NaiveReference::image(size_t i) { return impl_->h_img + i * impl_->n_out; }

void NaiveReference::frame() {
  impl_->enqueue_frame();
  ok(cudaStreamSynchronize(impl_->stream), "sync");
}

void NaiveReference::frame_graph() {
  ok(cudaGraphLaunch(impl_->graph, impl_->stream), "cudaGraphLaunch");
  ok(cudaStreamSynchronize(impl_->stream), "sync");
}

void NaiveReference::batch(size_t n) {
  Impl& m = *impl_;
  const float one = 1.f, zero = 0.f;
  ok(cudaMemcpyAsync(m.d_v, m.h_v, n * m.n_meas * 4, cudaMemcpyHostToDevice, m.stream), "up");
  ok(cublasSgemm(m.blas, CUBLAS_OP_T, CUBLAS_OP_N, m.n_out, n, m.n_meas, &one, m.d_H, m.n_meas,
                 m.d_v, m.n_meas, &zero, m.d_img, m.n_out),
     "cublasSgemm");
  ok(cudaMemcpyAsync(m.h_img, m.d_img, n * m.n_out * 4, cudaMemcpyDeviceToHost, m.stream), "down");
  ok(cudaStreamSynchronize(m.stream), "sync");
}

Bandwidth measure_pcie_bandwidth(size_t bytes) {
  void *h = nullptr, *d = nullptr;
  ok(cudaHostAlloc(&h, bytes, 0), "cudaHostAlloc");
  ok(cudaMalloc(&d, bytes), "cudaMalloc");
  Bandwidth b;
  for (int dir = 0; dir < 2; ++dir) {
    double best = 0;
    for (int rep = 0; rep < 5; ++rep) {
      const int64_t t0 = pipeline::now_ns();
      if (dir == 0)
        ok(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice), "h2d");
      else
        ok(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost), "d2h");
      const double gbs = bytes / double(pipeline::now_ns() - t0);
      best = std::max(best, gbs);
    }
    (dir == 0 ? b.h2d_gbs : b.d2h_gbs) = best;
  }
  cudaFree(d);
  cudaFreeHost(h);
  return b;
}

}  // namespace eit::gpu::bench
