#pragma once
// DeviceMatrix: H (in the chosen precision, rows padded to ld), v_ref and the weights, resident
// in device memory; uploaded once. Set-up only: every method may allocate and throws
// std::invalid_argument / std::runtime_error naming what is wrong.
#include <cstddef>
#include <span>

#include "device_types.hpp"
#include "eit/gpu/cuda_backend.hpp"
#include "eit/recon/model.hpp"

namespace eit::gpu {

class DeviceMatrix {
 public:
  // ld for n_meas columns: a multiple of 8 elements (16 bytes in every precision).
  static int padded_ld(size_t n_meas) { return static_cast<int>((n_meas + 7) / 8 * 8); }
  // Checks H (finite; within fp16 range for kFp16) and uploads it. The caller checked the fit.
  DeviceMatrix(const recon::MatrixRowMajorF& H, Precision precision);
  ~DeviceMatrix();
  DeviceMatrix(const DeviceMatrix&) = delete;
  DeviceMatrix& operator=(const DeviceMatrix&) = delete;

  // v_ref: n_meas finite values; with normalize, none zero. Only while no kernel reads them.
  void set_reference(std::span<const double> v_ref, bool normalize);
  bool has_reference() const noexcept { return has_reference_; }
  const DeviceModel& model() const noexcept { return model_; }
  size_t h_bytes() const noexcept;

 private:
  Precision precision_;
  DeviceModel model_{};
  void* h_ = nullptr;
  void release() noexcept;

  float* v_ref_ = nullptr;
  float* v_ref_lo_ = nullptr;
  float* weight_ = nullptr;
  bool has_reference_ = false;
};

}  // namespace eit::gpu
