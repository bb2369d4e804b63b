// DeviceMatrix: checking and uploading H, v_ref and the weights (set-up only).
#include "device_matrix.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "frame_kernels.hpp"

namespace eit::gpu {
namespace {
constexpr size_t kUploadChunkBytes = size_t{64} << 20;
constexpr float kFp16Max = 65504.f;

void check_matrix(const recon::MatrixRowMajorF& H, Precision precision) {
  const float* p = H.data();
  const size_t n = static_cast<size_t>(H.size());
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(p[i]))
      throw std::invalid_argument(
          fmt::format("CUDA backend: H[{}, {}] = {}; every element of H must be finite",
                      i / H.cols(), i % H.cols(), p[i]));
    if (precision == kFp16 && std::abs(p[i]) > kFp16Max)
      throw std::invalid_argument(fmt::format(
          "CUDA backend: H[{}, {}] = {} exceeds the fp16 range (|x| <= {}); use bf16 or float32",
          i / H.cols(), i % H.cols(), p[i], kFp16Max));
  }
}
}  // namespace

DeviceMatrix::DeviceMatrix(const recon::MatrixRowMajorF& H, Precision precision)
    : precision_(precision) {
  if (H.rows() <= 0 || H.cols() <= 0)
    throw std::invalid_argument(
        fmt::format("CUDA backend: H is {} × {}; expected at least 1 × 1", H.rows(), H.cols()));
  if (H.rows() > (1 << 30) || H.cols() > (1 << 20))
    throw std::invalid_argument(fmt::format(
        "CUDA backend: H is {} × {}; at most 2^30 rows and 2^20 columns", H.rows(), H.cols()));
  check_matrix(H, precision);
  model_.n_out = static_cast<int>(H.rows());
  model_.n_meas = static_cast<int>(H.cols());
  model_.ld = padded_ld(H.cols());
  EIT_CUDA(cudaMalloc(&h_, h_bytes()));
  EIT_CUDA(cudaMalloc(&v_ref_, model_.ld * sizeof(float)));
  EIT_CUDA(cudaMalloc(&v_ref_lo_, model_.ld * sizeof(float)));
  EIT_CUDA(cudaMalloc(&weight_, model_.ld * sizeof(float)));
  EIT_CUDA(cudaMemset(v_ref_, 0, model_.ld * sizeof(float)));
  EIT_CUDA(cudaMemset(v_ref_lo_, 0, model_.ld * sizeof(float)));
  EIT_CUDA(cudaMemset(weight_, 0, model_.ld * sizeof(float)));
  model_.H = h_;
  model_.v_ref = v_ref_;
  model_.v_ref_lo = v_ref_lo_;
  model_.weight = weight_;

  // Rows go up in chunks through a float32 buffer and are converted into the padded layout.
  const size_t row_bytes = model_.n_meas * sizeof(float);
  const size_t chunk_rows =
      std::min<size_t>(model_.n_out, std::max<size_t>(1, kUploadChunkBytes / row_bytes));
  float* chunk = nullptr;
  cudaStream_t stream = nullptr;
  EIT_CUDA(cudaMalloc(&chunk, chunk_rows * row_bytes));
  try {
    EIT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const size_t eb = element_bytes(precision);
    for (size_t r0 = 0; r0 < static_cast<size_t>(model_.n_out); r0 += chunk_rows) {
      const size_t rows = std::min(chunk_rows, model_.n_out - r0);
      EIT_CUDA(cudaMemcpyAsync(chunk, H.data() + r0 * model_.n_meas, rows * row_bytes,
                               cudaMemcpyHostToDevice, stream));
      launch_convert_rows(precision, chunk, static_cast<int>(rows), model_.n_meas,
                          static_cast<char*>(h_) + r0 * model_.ld * eb, model_.ld, stream);
      EIT_CUDA(cudaStreamSynchronize(stream));
    }
  } catch (...) {
    if (stream) cudaStreamDestroy(stream);
    cudaFree(chunk);
    release();
    throw;
  }
  cudaStreamDestroy(stream);
  cudaFree(chunk);
}

DeviceMatrix::~DeviceMatrix() { release(); }

void DeviceMatrix::release() noexcept {
  for (float** p : {&weight_, &v_ref_lo_, &v_ref_}) {
    if (*p) cudaFree(*p);
    *p = nullptr;
  }
  if (h_) cudaFree(h_);
  h_ = nullptr;
}

size_t DeviceMatrix::h_bytes() const noexcept {
  return static_cast<size_t>(model_.n_out) * model_.ld * element_bytes(precision_);
}

void DeviceMatrix::set_reference(std::span<const double> v_ref, bool normalize) {
  if (v_ref.size() != static_cast<size_t>(model_.n_meas))
    throw std::invalid_argument(
        fmt::format("CUDA backend: v_ref has {} values, H has {} columns (measurements)",
                    v_ref.size(), model_.n_meas));
  // v_ref as a float pair (hi + lo) so v − v_ref keeps double accuracy for v near v_ref.
  std::vector<float> ref(model_.ld, 0.f), ref_lo(model_.ld, 0.f), weight(model_.ld, 0.f);
  for (size_t i = 0; i < v_ref.size(); ++i) {
    if (!std::isfinite(v_ref[i]) || (normalize && v_ref[i] == 0.0))
      throw std::invalid_argument(
          fmt::format("CUDA backend: v_ref[{}] = {}; expected a finite{} value", i, v_ref[i],
                      normalize ? ", non-zero (normalize divides by |v_ref|)" : ""));
    ref[i] = static_cast<float>(v_ref[i]);
    ref_lo[i] = static_cast<float>(v_ref[i] - static_cast<double>(ref[i]));
    weight[i] = normalize ? static_cast<float>(1.0 / std::abs(v_ref[i])) : 1.f;
  }
  EIT_CUDA(cudaMemcpy(v_ref_, ref.data(), ref.size() * sizeof(float), cudaMemcpyHostToDevice));
  EIT_CUDA(
      cudaMemcpy(v_ref_lo_, ref_lo.data(), ref_lo.size() * sizeof(float), cudaMemcpyHostToDevice));
  EIT_CUDA(
      cudaMemcpy(weight_, weight.data(), weight.size() * sizeof(float), cudaMemcpyHostToDevice));
  has_reference_ = true;
}

}  // namespace eit::gpu
