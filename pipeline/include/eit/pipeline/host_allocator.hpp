#pragma once
// Where the FramePool gets its buffers. The default is aligned host memory; the CUDA backend
// supplies pinned (page-locked) memory so frames can be copied by DMA straight from their slots.
// Allocation happens once at start-up, never on the per-frame path.
#include <cstddef>
#include <string_view>

namespace eit::pipeline {

class HostAllocator {
 public:
  virtual ~HostAllocator() = default;
  virtual std::string_view name() const noexcept = 0;
  // Returns `bytes` of memory aligned to at least 64 bytes; throws std::bad_alloc on failure.
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* p) noexcept = 0;
};

// Plain 64-byte-aligned heap memory.
class AlignedHostAllocator final : public HostAllocator {
 public:
  std::string_view name() const noexcept override { return "host"; }
  void* allocate(size_t bytes) override;
  void deallocate(void* p) noexcept override;
};

AlignedHostAllocator& default_host_allocator();

}  // namespace eit::pipeline
