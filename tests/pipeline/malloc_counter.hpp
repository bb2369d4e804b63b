#pragma once
// Counting malloc in test_pipeline (glibc): the hook lives in test_allocation_free.cpp and
// interposes malloc, calloc, realloc and the aligned allocators for the whole binary (operator new
// goes through malloc). Not under a sanitizer, whose runtime owns malloc: there EIT_COUNT_MALLOC
// stays undefined and the tests that need it say they are skipped.
#include <atomic>
#include <cstdint>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define EIT_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define EIT_TEST_SANITIZED 1
#endif
#if !defined(EIT_TEST_SANITIZED) && defined(__GLIBC__)
#define EIT_COUNT_MALLOC 1
#endif

namespace eit::test {
extern std::atomic<uint64_t> g_allocations;  // every allocation by any thread
extern thread_local bool g_counting;         // count this thread's allocations in g_mallocs
extern thread_local long g_mallocs;
}  // namespace eit::test
