#pragma once
// MappedFrameAllocator: the CUDA backend's frame memory (Reconstructor::frame_allocator()).
// Blocks are page-locked and mapped into the device's address space (cudaHostAllocMapped), so the
// kernels read measurements from and write images to FramePool slots in place. The allocator
// remembers its own blocks (no process-wide table); the reconstructor asks once, when a pool is
// bound, where a block lies on the device and from then on translates addresses by adding a
// constant. Set-up only (FramePool construction and destruction): allocate/deallocate/find lock a
// mutex. Throws std::bad_alloc (with the CUDA reason in what()) when pinning or mapping fails.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

#include "eit/pipeline/host_allocator.hpp"

namespace eit::gpu {

// [begin, end) of host memory that the device sees at host address + delta.
struct MappedRange {
  uintptr_t begin = 0, end = 0;
  intptr_t delta = 0;
  bool contains(const void* p, size_t bytes) const noexcept {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    return a >= begin && a + bytes <= end;
  }
  template <typename T>
  T* device(T* host) const noexcept {
    return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(host) + delta);
  }
};

class MappedFrameAllocator final : public pipeline::HostAllocator {
 public:
  MappedFrameAllocator() = default;
  MappedFrameAllocator(const MappedFrameAllocator&) = delete;
  MappedFrameAllocator& operator=(const MappedFrameAllocator&) = delete;
  ~MappedFrameAllocator() override;  // frees blocks a caller forgot to return

  std::string_view name() const noexcept override { return "cuda-mapped"; }
  void* allocate(size_t bytes) override;
  void deallocate(void* p) noexcept override;
  // The block holding [p, p + bytes), if this allocator made it; false otherwise.
  bool find(const void* p, size_t bytes, MappedRange& out) const;

 private:
  mutable std::mutex mutex_;
  std::vector<MappedRange> blocks_;
};

}  // namespace eit::gpu
