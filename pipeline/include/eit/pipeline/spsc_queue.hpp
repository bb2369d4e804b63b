#pragma once
// Bounded lock-free single-producer/single-consumer ring. Our own rather than Boost.Lockfree's
// spsc_queue because stages need the queue's depth and high-water mark for stats, and cached
// indices keep the producer and consumer from touching each other's cache line on most calls
// (the high-water mark included).
// Exactly one thread may push and one thread may pop. Never allocates after construction.
#include <atomic>
#include <bit>
#include <cstddef>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>

namespace eit::pipeline {

inline constexpr size_t kCacheLine = 64;

template <typename T>
class SpscQueue {
 public:
  // Capacity is rounded up to a power of two.
  explicit SpscQueue(size_t capacity)
      : capacity_(std::bit_ceil(capacity < 2 ? size_t{2} : capacity)),
        mask_(capacity_ - 1),
        items_(std::make_unique<T[]>(capacity_)) {}

  SpscQueue(const SpscQueue&) = delete;
  SpscQueue& operator=(const SpscQueue&) = delete;

  size_t capacity() const noexcept { return capacity_; }

  // Producer only. False when full.
  bool try_push(const T& item) noexcept {
    const size_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_cache_ == capacity_) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      if (head - tail_cache_ == capacity_) return false;
    }
    items_[head & mask_] = item;
    head_.store(head + 1, std::memory_order_release);
    // High-water mark: the depth right after this push. The cached tail is never ahead of the
    // consumer's, so its depth is an upper bound; only when that bound beats the mark is the
    // consumer's index read (a cache line the consumer writes on every pop) for the exact depth.
    if (head + 1 - tail_cache_ > high_water_.load(std::memory_order_relaxed)) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      const size_t depth = head + 1 - tail_cache_;
      if (depth > high_water_.load(std::memory_order_relaxed))
        high_water_.store(depth, std::memory_order_relaxed);
    }
    return true;
  }

  // Consumer only. False when empty.
  bool try_pop(T& out) noexcept {
    const size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail == head_cache_) {
      head_cache_ = head_.load(std::memory_order_acquire);
      if (tail == head_cache_) return false;
    }
    out = items_[tail & mask_];
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

  // Any thread; exact only when both sides are idle.
  size_t size_approx() const noexcept {
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire);
  }
  bool empty_approx() const noexcept { return size_approx() == 0; }
  // Deepest the queue has been (as seen by the producer), for stats.
  size_t high_water() const noexcept { return high_water_.load(std::memory_order_relaxed); }

 private:
  const size_t capacity_;
  const size_t mask_;
  std::unique_ptr<T[]> items_;
  alignas(kCacheLine) std::atomic<size_t> head_{0};  // written by producer
  size_t tail_cache_ = 0;                            // producer's view of tail_
  std::atomic<size_t> high_water_{0};
  alignas(kCacheLine) std::atomic<size_t> tail_{0};  // written by consumer
  size_t head_cache_ = 0;                            // consumer's view of head_
};

}  // namespace eit::pipeline
