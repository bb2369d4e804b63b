#include "eit/view/recent_frame_ring.hpp"

#include <algorithm>
#include <cstring>

namespace eit::view {
namespace {

using Word = uint64_t;
constexpr size_t kWord = sizeof(Word);

void store_word(Word& w, Word v) noexcept {
  std::atomic_ref<Word>(w).store(v, std::memory_order_relaxed);
}

// Writes a byte sequence given in pieces into consecutive words (the last one zero-padded).
class WordWriter {
 public:
  explicit WordWriter(Word* dst) : dst_(dst) {}
  void put(std::span<const std::byte> bytes) noexcept {
    const std::byte* p = bytes.data();
    size_t n = bytes.size();
    while (fill_ && n) {
      acc_[fill_++] = *p++;
      --n;
      if (fill_ == kWord) flush();
    }
    for (; n >= kWord; p += kWord, n -= kWord) {
      Word v;
      std::memcpy(&v, p, kWord);
      store_word(*dst_++, v);
    }
    while (n--) acc_[fill_++] = *p++;
  }
  void finish() noexcept {
    if (!fill_) return;
    std::fill(acc_ + fill_, acc_ + kWord, std::byte{0});
    flush();
  }

 private:
  void flush() noexcept {
    Word v;
    std::memcpy(&v, acc_, kWord);
    store_word(*dst_++, v);
    fill_ = 0;
  }
  Word* dst_;
  std::byte acc_[kWord] = {};
  size_t fill_ = 0;
};

}  // namespace

RecentFrameRing::RecentFrameRing(size_t capacity, size_t slots)
    : capacity_(capacity),
      words_per_slot_((capacity + kWord - 1) / kWord),
      storage_(new Word[std::max<size_t>(1, slots * words_per_slot_)]()),
      slots_(std::max<size_t>(2, slots)) {}

bool RecentFrameRing::write(std::span<const std::byte> head,
                            std::span<const std::byte> body) noexcept {
  const size_t n = head.size() + body.size();
  if (n > capacity_) {
    bump(oversized_);
    return false;
  }
  const uint64_t number = head_.load(std::memory_order_relaxed);
  Slot& slot = slots_[number % slots_.size()];
  slot.mark.store(2 * number + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // the odd mark before any word
  WordWriter w(storage_.get() + (number % slots_.size()) * words_per_slot_);
  w.put(head);
  w.put(body);
  w.finish();
  slot.bytes.store(n, std::memory_order_relaxed);
  slot.mark.store(2 * number + 2, std::memory_order_release);
  head_.store(number + 1, std::memory_order_release);
  return true;
}

bool RecentFrameRing::take(std::vector<std::byte>& out) {
  const uint64_t head = head_.load(std::memory_order_acquire);
  const uint64_t n_slots = slots_.size();
  while (next_ < head) {
    // Only the newest n_slots messages can still be there (the oldest may be being overwritten).
    if (head - next_ > n_slots) {
      bump(overwritten_, head - n_slots - next_);
      next_ = head - n_slots;
    }
    const uint64_t number = next_++;
    const uint64_t expected = 2 * number + 2;
    Slot& slot = slots_[number % n_slots];
    if (slot.mark.load(std::memory_order_acquire) != expected) {
      bump(overwritten_);
      continue;
    }
    const size_t bytes = std::min<size_t>(slot.bytes.load(std::memory_order_relaxed), capacity_);
    out.resize(bytes);
    Word* src = storage_.get() + (number % n_slots) * words_per_slot_;
    for (size_t i = 0, k = 0; i < bytes; i += kWord, ++k) {
      const Word v = std::atomic_ref<Word>(src[k]).load(std::memory_order_relaxed);
      std::memcpy(out.data() + i, &v, std::min(kWord, bytes - i));
    }
    std::atomic_thread_fence(std::memory_order_acquire);  // every word read before the re-check
    if (slot.mark.load(std::memory_order_relaxed) != expected) {
      bump(overwritten_);  // overwritten while we copied it
      continue;
    }
    return true;
  }
  return false;
}

}  // namespace eit::view
