#pragma once
// FrameBufferPool: fixed slots of equal size, preallocated once, lent to libzmq for zero-copy
// sends (zmq_msg_init_data) and handed back from libzmq's free callback.
//
// Threads: acquire() from one thread only (the publisher's); release() from any thread (libzmq
// calls the free callback on its I/O thread, or on the sender's when a message is dropped).
// Lock-free: one atomic flag per slot. Allocation only in the constructor.
// Lifetime: the pool must outlive every message that points into it; ZmqPublisher waits for
// in_use() == 0 before destroying it (and leaks it, rather than free memory libzmq still reads,
// if a peer holds messages past that wait).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace eit::sinks {

class FrameBufferPool {
 public:
  // Where a slot's free callback finds its way home (the hint passed to zmq_msg_init_data).
  struct Ticket {
    FrameBufferPool* pool = nullptr;
    uint32_t index = 0;
  };

  FrameBufferPool(size_t slots, size_t slot_bytes);
  FrameBufferPool(const FrameBufferPool&) = delete;
  FrameBufferPool& operator=(const FrameBufferPool&) = delete;

  // A free slot's index, or -1 when every slot is lent out: the slot acquired last when it is
  // back, else the first free one after it.
  int64_t acquire() noexcept;
  void release(uint32_t index) noexcept;
  std::byte* data(uint32_t index) noexcept { return storage_.get() + index * slot_bytes_; }
  Ticket* ticket(uint32_t index) noexcept { return &tickets_[index]; }
  size_t in_use() const noexcept { return in_use_.load(std::memory_order_acquire); }
  size_t slots() const noexcept { return slots_; }
  size_t slot_bytes() const noexcept { return slot_bytes_; }

  // The zmq_free_fn: hint is a Ticket*.
  static void free_callback(void* data, void* hint) noexcept;

  // One lent text (the series-end message), tracked like a slot: set text() and mark it lent
  // before handing text().data() to libzmq with text_free_callback and this pool as the hint.
  std::string& text() noexcept { return text_; }
  void lend_text() noexcept { text_lent_.store(true, std::memory_order_release); }
  bool text_lent() const noexcept { return text_lent_.load(std::memory_order_acquire); }
  static void text_free_callback(void* data, void* hint) noexcept;

 private:
  size_t slots_, slot_bytes_;
  size_t cursor_ = 0;  // acquire() side only
  std::unique_ptr<std::byte[]> storage_;
  std::unique_ptr<std::atomic<bool>[]> busy_;
  std::unique_ptr<Ticket[]> tickets_;
  std::atomic<size_t> in_use_{0};
  std::string text_;
  std::atomic<bool> text_lent_{false};
};

}  // namespace eit::sinks
