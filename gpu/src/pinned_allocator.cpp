// make_pinned_allocator(): cudaHostAlloc'd (page-locked, device-mapped, portable) blocks, and the
// registry of such blocks that the reconstructor consults to use frames in place.
#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <mutex>
#include <new>
#include <string>

#include <fmt/format.h>

#include "eit/gpu/cuda_backend.hpp"
#include "pinned_registry.hpp"

namespace eit::gpu {
namespace {

struct Range {
  std::atomic<uintptr_t> begin{0};  // 0: free entry
  std::atomic<uintptr_t> end{0};
  std::atomic<intptr_t> delta{0};  // device address − host address
};
constexpr size_t kMaxRanges = 64;
std::array<Range, kMaxRanges> g_ranges;
std::atomic<size_t> g_used{0};  // entries ever used (readers scan only these)
std::mutex g_register_mutex;    // writers only (set-up); readers never lock

class PinnedAllocError : public std::bad_alloc {
 public:
  explicit PinnedAllocError(std::string what) : what_(std::move(what)) {}
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  std::string what_;
};

class PinnedHostAllocator final : public pipeline::HostAllocator {
 public:
  std::string_view name() const noexcept override { return "cuda-pinned"; }
  void* allocate(size_t bytes) override {
    const size_t rounded = (bytes + 63) / 64 * 64;
    void* p = nullptr;
    const cudaError_t status =
        cudaHostAlloc(&p, rounded == 0 ? 64 : rounded, cudaHostAllocMapped | cudaHostAllocPortable);
    if (status != cudaSuccess) {
      cudaGetLastError();
      throw PinnedAllocError(fmt::format("cudaHostAlloc({} bytes): {}: {}", rounded,
                                         cudaGetErrorName(status), cudaGetErrorString(status)));
    }
    void* device = nullptr;
    if (cudaHostGetDevicePointer(&device, p, 0) != cudaSuccess) {
      cudaGetLastError();
      device = nullptr;  // not mapped: frames in it will be staged
    }
    if (device) register_pinned_range(p, rounded, device);
    return p;
  }
  void deallocate(void* p) noexcept override {
    if (!p) return;
    unregister_pinned_range(p);
    cudaFreeHost(p);
  }
};

}  // namespace

void register_pinned_range(const void* host, size_t bytes, void* device) {
  std::lock_guard lock(g_register_mutex);
  for (size_t i = 0; i < kMaxRanges; ++i) {
    Range& r = g_ranges[i];
    if (r.begin.load(std::memory_order_relaxed) != 0) continue;
    r.end.store(reinterpret_cast<uintptr_t>(host) + bytes, std::memory_order_relaxed);
    r.delta.store(reinterpret_cast<intptr_t>(device) - reinterpret_cast<intptr_t>(host),
                  std::memory_order_relaxed);
    r.begin.store(reinterpret_cast<uintptr_t>(host), std::memory_order_release);
    if (g_used.load(std::memory_order_relaxed) < i + 1)
      g_used.store(i + 1, std::memory_order_release);
    return;
  }
  // Table full: the block still works, frames in it are staged.
}

void unregister_pinned_range(const void* host) noexcept {
  std::lock_guard lock(g_register_mutex);
  for (Range& r : g_ranges)
    if (r.begin.load(std::memory_order_relaxed) == reinterpret_cast<uintptr_t>(host))
      r.begin.store(0, std::memory_order_release);
}

void* device_address(const void* p, size_t bytes) noexcept {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const size_t used = g_used.load(std::memory_order_acquire);
  for (size_t i = 0; i < used; ++i) {
    const Range& r = g_ranges[i];
    const uintptr_t begin = r.begin.load(std::memory_order_acquire);
    if (begin == 0 || a < begin) continue;
    if (a + bytes > r.end.load(std::memory_order_relaxed)) continue;
    return reinterpret_cast<void*>(a + r.delta.load(std::memory_order_relaxed));
  }
  return nullptr;
}

std::unique_ptr<pipeline::HostAllocator> make_pinned_allocator() {
  return std::make_unique<PinnedHostAllocator>();
}

}  // namespace eit::gpu
