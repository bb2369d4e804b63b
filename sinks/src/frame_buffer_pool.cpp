#include "frame_buffer_pool.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace eit::sinks {

FrameBufferPool::FrameBufferPool(size_t slots, size_t slot_bytes)
    : slots_(slots), slot_bytes_((slot_bytes + 63) / 64 * 64) {
  if (slots == 0 || slot_bytes == 0)
    throw std::invalid_argument(fmt::format(
        "frame buffer pool: {} slots of {} bytes (both must be > 0)", slots, slot_bytes));
  storage_.reset(new std::byte[slots_ * slot_bytes_]);
  busy_.reset(new std::atomic<bool>[slots_]);
  tickets_.reset(new Ticket[slots_]);
  for (size_t i = 0; i < slots_; ++i) {
    busy_[i].store(false, std::memory_order_relaxed);
    tickets_[i] = {this, static_cast<uint32_t>(i)};
  }
}

// From the slot lent last: at a paced rate it is back by the next image and still in this
// thread's cache (the image is copied into it); when it is not, the slots after it, which went
// out longest ago.
int64_t FrameBufferPool::acquire() noexcept {
  for (size_t n = 0; n < slots_; ++n) {
    const size_t i = (cursor_ + n) % slots_;
    if (!busy_[i].load(std::memory_order_acquire)) {
      busy_[i].store(true, std::memory_order_relaxed);
      in_use_.fetch_add(1, std::memory_order_acq_rel);
      cursor_ = i;
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

void FrameBufferPool::release(uint32_t index) noexcept {
  busy_[index].store(false, std::memory_order_release);
  in_use_.fetch_sub(1, std::memory_order_acq_rel);
}

void FrameBufferPool::free_callback(void*, void* hint) noexcept {
  auto* t = static_cast<Ticket*>(hint);
  t->pool->release(t->index);
}

void FrameBufferPool::text_free_callback(void*, void* hint) noexcept {
  static_cast<FrameBufferPool*>(hint)->text_lent_.store(false, std::memory_order_release);
}

}  // namespace eit::sinks
