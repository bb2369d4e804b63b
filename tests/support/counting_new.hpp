#pragma once
// Counts every allocation of a test binary into allocation_count.hpp's counters. Include it from
// exactly one .cpp per test binary: it defines the counters and replaces the allocation functions
// (a second inclusion fails to link). With glibc and no sanitizer it interposes malloc, calloc,
// realloc and the aligned allocators, which operator new goes through; under a sanitizer, whose
// runtime owns malloc, it replaces the global operator new and delete instead.
#include <cstdlib>
#include <new>

#include "allocation_count.hpp"

namespace eit::test {
std::atomic<uint64_t> g_allocations{0};
thread_local uint64_t t_allocations = 0;
}  // namespace eit::test

namespace eit::test::detail {
inline void count_allocation() noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  ++t_allocations;
}
}  // namespace eit::test::detail

#if defined(EIT_COUNT_MALLOC)
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);

void* malloc(size_t n) {
  eit::test::detail::count_allocation();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t size) {
  eit::test::detail::count_allocation();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) {
  eit::test::detail::count_allocation();
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t alignment, size_t n) {
  eit::test::detail::count_allocation();
  return __libc_memalign(alignment, n);
}
void* memalign(size_t alignment, size_t n) {
  eit::test::detail::count_allocation();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) {
  eit::test::detail::count_allocation();
  void* p = __libc_memalign(alignment, n);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
}
#else
void* operator new(std::size_t size) {
  eit::test::detail::count_allocation();
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#endif
