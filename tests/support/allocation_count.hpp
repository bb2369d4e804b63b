#pragma once
// Allocation counters for the tests that prove a path allocates nothing. counting_new.hpp, included
// by exactly one .cpp of a test binary, defines them and feeds them; any file of that binary may
// read them through this header.
//
// What is counted: with glibc and no sanitizer (EIT_COUNT_MALLOC defined) every malloc-family call,
// operator new included (it goes through malloc); under a sanitizer, whose runtime owns malloc,
// only the global operator new and new[].
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
extern thread_local uint64_t t_allocations;  // this thread's allocations
}  // namespace eit::test
