#pragma once
// RecentFrameRing: hands image messages (ImageHeader + float32 payload, as one byte block) from
// one producer thread to one consumer thread, keeping the newest `slots` of them. The producer
// never waits: when the consumer is `slots` messages behind, the producer overwrites the oldest.
// The consumer takes messages oldest first, never an older one after a newer one; every message it
// did not get (overwritten before it was taken, or overwritten while it was being copied) is
// counted. So a consumer thread that was delayed for a while (a loaded machine) still gets the
// last `slots` messages of the delay, and one that stops reading costs nothing.
//
// A sequence lock per slot: the producer marks the slot odd, stores the words, marks it with the
// message's number; the consumer copies the words and keeps the copy only if the mark did not
// change meanwhile. All shared words are accessed atomically (relaxed), so there is no data race.
//
// Threads: exactly one producer (write) and one consumer (take). Memory: `slots` × `capacity`
// bytes allocated in the constructor; write() never allocates, locks or blocks; take() copies into
// the caller's buffer (which allocates only when that buffer has to grow).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace eit::view {

class RecentFrameRing {
 public:
  static constexpr size_t kDefaultSlots = 16;

  explicit RecentFrameRing(size_t capacity, size_t slots = kDefaultSlots);

  size_t capacity() const noexcept { return capacity_; }
  size_t slots() const noexcept { return slots_.size(); }

  // Producer: copies head then body into the ring as one message; false (counted as oversized,
  // nothing written) when they do not fit.
  bool write(std::span<const std::byte> head, std::span<const std::byte> body) noexcept;

  // Consumer: copies the oldest message not yet taken that is still whole into `out` (resized to
  // its length) and returns true; false when there is none.
  bool take(std::vector<std::byte>& out);

  uint64_t written() const noexcept { return head_.load(std::memory_order_relaxed); }
  // Messages the consumer never got because the producer had overwritten them.
  uint64_t overwritten() const noexcept { return overwritten_.load(std::memory_order_relaxed); }
  uint64_t oversized() const noexcept { return oversized_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    // 0: empty; 2n+1: message n being written; 2n+2: holds message n whole.
    std::atomic<uint64_t> mark{0};
    std::atomic<uint64_t> bytes{0};
  };
  static void bump(std::atomic<uint64_t>& c, uint64_t by = 1) noexcept {
    c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }

  size_t capacity_;
  size_t words_per_slot_;
  std::unique_ptr<uint64_t[]> storage_;  // slots × words_per_slot_, accessed via atomic_ref
  std::vector<Slot> slots_;
  std::atomic<uint64_t> head_{0};  // messages written completely (producer's count)
  uint64_t next_ = 0;              // consumer: number of the next message to take
  std::atomic<uint64_t> overwritten_{0}, oversized_{0};
};

}  // namespace eit::view
