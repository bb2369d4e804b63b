#include "eit/pipeline/host_allocator.hpp"

#include <cstdlib>
#include <new>

namespace eit::pipeline {

void* AlignedHostAllocator::allocate(size_t bytes) {
  const size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (!p) throw std::bad_alloc();
  return p;
}

void AlignedHostAllocator::deallocate(void* p) noexcept { std::free(p); }

AlignedHostAllocator& default_host_allocator() {
  static AlignedHostAllocator allocator;
  return allocator;
}

}  // namespace eit::pipeline
