// MappedFrameAllocator: cudaHostAlloc'd (page-locked, device-mapped, portable) blocks and the
// list of them (see mapped_frame_allocator.hpp).
#include "mapped_frame_allocator.hpp"

#include <cuda_runtime.h>

#include <new>
#include <string>

#include <fmt/format.h>

namespace eit::gpu {
namespace {

class MappedAllocError : public std::bad_alloc {
 public:
  explicit MappedAllocError(std::string what) : what_(std::move(what)) {}
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  std::string what_;
};

}  // namespace

MappedFrameAllocator::~MappedFrameAllocator() {
  for (const MappedRange& r : blocks_) cudaFreeHost(reinterpret_cast<void*>(r.begin));
}

void* MappedFrameAllocator::allocate(size_t bytes) {
  const size_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
  void* p = nullptr;
  cudaError_t status = cudaHostAlloc(&p, rounded, cudaHostAllocMapped | cudaHostAllocPortable);
  if (status != cudaSuccess) {
    cudaGetLastError();
    throw MappedAllocError(fmt::format("cudaHostAlloc({} bytes): {}: {}", rounded,
                                       cudaGetErrorName(status), cudaGetErrorString(status)));
  }
  void* device = nullptr;
  status = cudaHostGetDevicePointer(&device, p, 0);
  if (status != cudaSuccess) {
    cudaGetLastError();
    cudaFreeHost(p);
    throw MappedAllocError(fmt::format(
        "cudaHostGetDevicePointer({} bytes of frame memory): {}: {} (the device cannot map host "
        "memory, which the CUDA backend needs)",
        rounded, cudaGetErrorName(status), cudaGetErrorString(status)));
  }
  MappedRange r;
  r.begin = reinterpret_cast<uintptr_t>(p);
  r.end = r.begin + rounded;
  r.delta = reinterpret_cast<intptr_t>(device) - reinterpret_cast<intptr_t>(p);
  try {
    std::lock_guard lock(mutex_);
    blocks_.push_back(r);
  } catch (...) {
    cudaFreeHost(p);
    throw;
  }
  return p;
}

void MappedFrameAllocator::deallocate(void* p) noexcept {
  if (!p) return;
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    if (blocks_[i].begin != reinterpret_cast<uintptr_t>(p)) continue;
    blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
    cudaFreeHost(p);
    return;
  }
}

bool MappedFrameAllocator::find(const void* p, size_t bytes, MappedRange& out) const {
  std::lock_guard lock(mutex_);
  for (const MappedRange& r : blocks_)
    if (r.contains(p, bytes)) {
      out = r;
      return true;
    }
  return false;
}

}  // namespace eit::gpu
