#include "eit/view/latest_frame_mailbox.hpp"

#include <cstring>

namespace eit::view {

LatestFrameMailbox::LatestFrameMailbox(size_t capacity)
    : capacity_(capacity), storage_(3 * capacity) {}

bool LatestFrameMailbox::write(std::span<const std::byte> head,
                               std::span<const std::byte> body) noexcept {
  const size_t n = head.size() + body.size();
  if (n > capacity_) {
    bump(oversized_);
    return false;
  }
  std::byte* dst = storage_.data() + back_ * capacity_;
  if (!head.empty()) std::memcpy(dst, head.data(), head.size());
  if (!body.empty()) std::memcpy(dst + head.size(), body.data(), body.size());
  sizes_[back_] = n;
  // Release: the consumer that swaps this buffer in sees its bytes and size.
  const uint32_t old = middle_.exchange(back_ | kFresh, std::memory_order_acq_rel);
  back_ = old & ~kFresh;
  if (old & kFresh) bump(overwritten_);
  bump(written_);
  return true;
}

bool LatestFrameMailbox::take() noexcept {
  if (!(middle_.load(std::memory_order_relaxed) & kFresh)) return false;
  const uint32_t old = middle_.exchange(front_, std::memory_order_acq_rel);
  front_ = old & ~kFresh;
  return true;
}

std::span<const std::byte> LatestFrameMailbox::latest() const noexcept {
  return {storage_.data() + front_ * capacity_, sizes_[front_]};
}

}  // namespace eit::view
