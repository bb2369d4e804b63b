#include "l2_residency.hpp"

#include <algorithm>

#include "cuda_check.hpp"

namespace eit::gpu {

bool L2Residency::worth_keeping(size_t bytes, size_t max_persisting, size_t max_window) noexcept {
  return bytes > 0 && bytes <= max_window && 2 * std::min(bytes, max_persisting) >= bytes;
}

L2Residency::L2Residency(int device, const void* base, size_t bytes) : base_(base) {
  int max_persisting = 0, max_window = 0;
  EIT_CUDA(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device));
  EIT_CUDA(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device));
  device_max_persisting_ = static_cast<size_t>(std::max(max_persisting, 0));
  device_max_window_ = static_cast<size_t>(std::max(max_window, 0));
  if (!worth_keeping(bytes, device_max_persisting_, device_max_window_)) return;
  EIT_CUDA(cudaDeviceGetLimit(&previous_limit_, cudaLimitPersistingL2CacheSize));
  // Refused where the context may not set it aside (some MIG/MPS set-ups): H then streams, as
  // on a device without persisting L2; nothing else depends on it.
  if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, std::min(bytes, device_max_persisting_)) !=
      cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: clear it so later calls do not report it
    return;
  }
  limit_set_ = true;
  // The driver may round the set-aside; the hit ratio follows what it granted.
  EIT_CUDA(cudaDeviceGetLimit(&set_aside_, cudaLimitPersistingL2CacheSize));
  window_bytes_ = bytes;  // worth_keeping: within the largest window
  hit_ratio_ = std::min(1.0f, static_cast<float>(set_aside_) / static_cast<float>(window_bytes_));
  if (set_aside_ == 0) window_bytes_ = 0;  // nothing granted: no window either
}

L2Residency::~L2Residency() {
  if (!limit_set_) return;
  cudaCtxResetPersistingL2Cache();  // no lines stay persisting for whatever runs next
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, previous_limit_);
}

void L2Residency::apply(cudaStream_t stream) const {
  if (!active()) return;
  cudaStreamAttrValue attr{};
  attr.accessPolicyWindow.base_ptr = const_cast<void*>(base_);
  attr.accessPolicyWindow.num_bytes = window_bytes_;
  attr.accessPolicyWindow.hitRatio = hit_ratio_;
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  EIT_CUDA(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr));
}

}  // namespace eit::gpu
