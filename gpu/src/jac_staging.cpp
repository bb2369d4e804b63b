// Host ↔ device copies through the pinned staging ring (jac_staging.hpp).
#include "jac_staging.hpp"

#include <algorithm>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

#include "eit/gpu/cuda_jac_solve.hpp"

namespace eit::gpu::detail {
namespace {

size_t chunk_size(size_t chunk) {
  return chunk == 0 ? kJacStagingSlotBytes : std::min(chunk, kJacStagingSlotBytes);
}

// memcpy split over up to kMaxCopyThreads threads (≥ 4 MiB each): one thread's memcpy moves
// ~10 GB/s, less into fresh pages (the download's destination faults on first touch), below
// what PCIe does with pinned memory. A thread that cannot be started leaves its part to this one.
constexpr size_t kMaxCopyThreads = 8, kMinPart = size_t{4} << 20;

void parallel_copy(unsigned char* dst, const unsigned char* src, size_t n) {
  static const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t parts = std::clamp<size_t>(n / kMinPart, 1, std::min(kMaxCopyThreads, cores));
  const size_t step = (n + parts - 1) / parts;
  std::vector<std::thread> threads;
  threads.reserve(parts);
  for (size_t p = 1; p < parts; ++p) {
    const size_t off = p * step, len = std::min(step, n - off);
    try {
      threads.emplace_back([=] { std::memcpy(dst + off, src + off, len); });
    } catch (const std::system_error&) {
      std::memcpy(dst + off, src + off, len);
    }
  }
  std::memcpy(dst, src, std::min(step, n));
  for (auto& t : threads) t.join();
}

}  // namespace

void staged_upload(JacSolveContext& c, void* device, const void* host, size_t bytes, size_t chunk) {
  if (!c.slot[0]) {  // no pinned ring (jac_solve_context.cpp): the driver's pageable path
    JAC_CK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, c.stream));
    JAC_CK(cudaStreamSynchronize(c.stream));
    return;
  }
  chunk = chunk_size(chunk);
  const auto* src = static_cast<const unsigned char*>(host);
  auto* dst = static_cast<unsigned char*>(device);
  size_t i = 0;
  for (size_t off = 0; off < bytes; off += chunk, ++i) {
    const size_t k = i % JacSolveContext::kSlots, n = std::min(chunk, bytes - off);
    // The slot's previous copy (kSlots chunks ago) must be done before it is overwritten; the
    // events start out complete.
    JAC_CK(cudaEventSynchronize(c.slot_free[k]));
    parallel_copy(c.slot[k], src + off, n);
    JAC_CK(cudaMemcpyAsync(dst + off, c.slot[k], n, cudaMemcpyHostToDevice, c.stream));
    JAC_CK(cudaEventRecord(c.slot_free[k], c.stream));
  }
  JAC_CK(cudaStreamSynchronize(c.stream));
}

void staged_download(JacSolveContext& c, void* host, const void* device, size_t bytes,
                     size_t chunk) {
  if (!c.slot[0]) {
    JAC_CK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, c.stream));
    JAC_CK(cudaStreamSynchronize(c.stream));
    return;
  }
  chunk = chunk_size(chunk);
  const auto* src = static_cast<const unsigned char*>(device);
  auto* dst = static_cast<unsigned char*>(host);
  const size_t n_chunks = (bytes + chunk - 1) / chunk;
  const auto enqueue = [&](size_t i) {
    const size_t k = i % JacSolveContext::kSlots, off = i * chunk;
    JAC_CK(cudaMemcpyAsync(c.slot[k], src + off, std::min(chunk, bytes - off),
                           cudaMemcpyDeviceToHost, c.stream));
    JAC_CK(cudaEventRecord(c.slot_free[k], c.stream));
  };
  // Up to kSlots chunks in flight; each slot is refilled as soon as the host has copied it out.
  for (size_t i = 0; i < std::min(n_chunks, JacSolveContext::kSlots); ++i) enqueue(i);
  for (size_t i = 0; i < n_chunks; ++i) {
    const size_t k = i % JacSolveContext::kSlots, off = i * chunk;
    JAC_CK(cudaEventSynchronize(c.slot_free[k]));
    parallel_copy(dst + off, c.slot[k], std::min(chunk, bytes - off));
    if (i + JacSolveContext::kSlots < n_chunks) enqueue(i + JacSolveContext::kSlots);
  }
  JAC_CK(cudaStreamSynchronize(c.stream));
}

PageToucher::PageToucher(void* p, size_t bytes) {
  constexpr size_t kPage = 4096, kThreads = 4;
  auto* base = static_cast<unsigned char*>(p);
  const size_t step = (bytes / kThreads + kPage - 1) / kPage * kPage;  // whole pages per thread
  for (size_t off = 0; off < bytes && step > 0; off += step) {
    const size_t end = std::min(bytes, off + step);
    try {
      threads_.emplace_back([base, off, end] {
        for (size_t i = off; i < end; i += kPage) base[i] = 0;  // overwritten by the download
      });
    } catch (const std::system_error&) {
      break;
    }
  }
}

void PageToucher::join() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

}  // namespace eit::gpu::detail
