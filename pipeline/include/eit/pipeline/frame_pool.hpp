#pragma once
// FramePool: every FrameSlot the pipeline will ever use, allocated once at start-up from a
// HostAllocator (pinned memory for the CUDA backend). The free list is an SPSC queue: exactly one
// thread acquires (the source) and exactly one thread releases (the last stage). Neither call
// allocates, locks or blocks.
#include <cstddef>
#include <memory>
#include <vector>

#include "eit/pipeline/frame.hpp"
#include "eit/pipeline/host_allocator.hpp"
#include "eit/pipeline/spsc_queue.hpp"

namespace eit::pipeline {

class FramePool {
 public:
  // n_slots slots, each with n_values measurement floats and n_image image floats. The allocator
  // must outlive the pool.
  FramePool(size_t n_slots, size_t n_values, size_t n_image,
            HostAllocator& allocator = default_host_allocator());
  ~FramePool();
  FramePool(const FramePool&) = delete;
  FramePool& operator=(const FramePool&) = delete;

  // Source thread only. nullptr when every slot is in flight.
  FrameSlot* try_acquire() noexcept;
  // Releasing thread only. The slot's contents are kept; the next acquirer overwrites them.
  void release(FrameSlot* slot) noexcept;

  size_t size() const noexcept { return slots_.size(); }
  size_t n_values() const noexcept { return n_values_; }
  size_t n_image() const noexcept { return n_image_; }
  size_t available_approx() const noexcept { return free_.size_approx(); }
  FrameSlot& slot(size_t i) noexcept { return slots_[i]; }
  const HostAllocator& allocator() const noexcept { return allocator_; }
  // The contiguous buffers behind all slots (slot i's values at values_base() + i * values_stride()),
  // so a backend can register them with a device once.
  float* values_base() const noexcept { return values_; }
  float* image_base() const noexcept { return image_; }
  size_t values_stride() const noexcept { return values_stride_; }
  size_t image_stride() const noexcept { return image_stride_; }

 private:
  size_t n_values_, n_image_;
  size_t values_stride_, image_stride_;  // floats, rounded up to 64-byte multiples
  HostAllocator& allocator_;
  float* values_ = nullptr;
  float* image_ = nullptr;
  std::vector<FrameSlot> slots_;
  SpscQueue<FrameSlot*> free_;
};

}  // namespace eit::pipeline
