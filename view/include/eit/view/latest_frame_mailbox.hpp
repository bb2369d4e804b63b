#pragma once
// LatestFrameMailbox: hands the newest image message (ImageHeader + float32 payload, as one byte
// block) from one producer thread to one consumer thread, keeping only the newest. A triple
// buffer: the producer writes into its own buffer and swaps it with the shared middle one; the
// consumer swaps the middle one with its own when it is newer. Neither side ever waits for the
// other, allocates or locks; a frame the consumer did not take before the next one replaced it is
// counted as overwritten.
//
// Threads: exactly one producer (write) and one consumer (take, latest). Memory: three buffers of
// `capacity` bytes allocated in the constructor.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace eit::view {

class LatestFrameMailbox {
 public:
  explicit LatestFrameMailbox(size_t capacity);

  size_t capacity() const noexcept { return capacity_; }

  // Producer: copies head then body into the mailbox as one message; false (counted as
  // oversized, nothing written) when they do not fit.
  bool write(std::span<const std::byte> head, std::span<const std::byte> body) noexcept;

  // Consumer: true when a message newer than the last taken one arrived; latest() then holds it.
  bool take() noexcept;
  // Consumer: the message of the last successful take() (empty before the first).
  std::span<const std::byte> latest() const noexcept;

  uint64_t written() const noexcept { return written_.load(std::memory_order_relaxed); }
  uint64_t overwritten() const noexcept { return overwritten_.load(std::memory_order_relaxed); }
  uint64_t oversized() const noexcept { return oversized_.load(std::memory_order_relaxed); }

 private:
  static constexpr uint32_t kFresh = 4;  // the middle buffer holds a message not yet taken
  static void bump(std::atomic<uint64_t>& c) noexcept {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  size_t capacity_;
  std::vector<std::byte> storage_;   // 3 × capacity_
  size_t sizes_[3] = {0, 0, 0};      // bytes of each buffer's message (owned with the buffer)
  uint32_t back_ = 0;                // producer's buffer
  uint32_t front_ = 1;               // consumer's buffer
  std::atomic<uint32_t> middle_{2};  // index | kFresh
  std::atomic<uint64_t> written_{0}, overwritten_{0}, oversized_{0};
};

}  // namespace eit::view
