#pragma once
// Cache prefetch hints for the per-frame path: fetch the next image while the current one is
// worked on. Images reach the reconstructor's fan-out from DMA and the sink threads from another
// core, and a scan or copy that meets each cache miss in turn is slow at full rate. Hints only:
// they never fault and never change what the program computes. Up to kPrefetchBytes of a buffer.
#include <algorithm>
#include <cstddef>

namespace eit::pipeline {

inline constexpr size_t kPrefetchBytes = 16 * 1024;  // an image of 4096 floats; larger: its start

// For a buffer this thread will read next.
inline void prefetch_for_read(const void* p, size_t bytes) noexcept {
  const auto* c = static_cast<const char*>(p);
  const size_t n = std::min(bytes, kPrefetchBytes);
  for (size_t b = 0; b < n; b += 64) __builtin_prefetch(c + b, 0, 2);
}

// For a buffer this thread will write next (taking ownership of lines other cores hold, e.g. a
// send buffer that libzmq's I/O thread read last time round).
inline void prefetch_for_write(void* p, size_t bytes) noexcept {
  auto* c = static_cast<char*>(p);
  const size_t n = std::min(bytes, kPrefetchBytes);
  for (size_t b = 0; b < n; b += 64) __builtin_prefetch(c + b, 1, 2);
}

}  // namespace eit::pipeline
