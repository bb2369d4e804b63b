#include "eit/pipeline/frame_pool.hpp"

#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace eit::pipeline {
namespace {
size_t round_to_cache_line(size_t floats) { return (floats + 15) / 16 * 16; }
}  // namespace

std::string_view stage_name(Stage s) noexcept {
  switch (s) {
    case Stage::kScheduled:
      return "scheduled";
    case Stage::kReceived:
      return "received";
    case Stage::kEnqueued:
      return "enqueued";
    case Stage::kDequeued:
      return "dequeued";
    case Stage::kSubmitted:
      return "submitted";
    case Stage::kDone:
      return "done";
    case Stage::kPublished:
      return "published";
    case Stage::kCount:
      break;
  }
  return "?";
}

FramePool::FramePool(size_t n_slots, size_t n_values, size_t n_image, HostAllocator& allocator)
    : n_values_(n_values),
      n_image_(n_image),
      values_stride_(round_to_cache_line(n_values)),
      image_stride_(round_to_cache_line(n_image)),
      allocator_(allocator),
      slots_(n_slots),
      free_(n_slots) {
  if (n_slots == 0 || n_values == 0 || n_image == 0)
    throw std::invalid_argument(fmt::format(
        "FramePool: slots ({}), values per frame ({}) and image size ({}) must all be > 0", n_slots,
        n_values, n_image));
  const size_t values_bytes = n_slots * values_stride_ * sizeof(float);
  const size_t image_bytes = n_slots * image_stride_ * sizeof(float);
  values_ = static_cast<float*>(allocator_.allocate(values_bytes));
  try {
    image_ = static_cast<float*>(allocator_.allocate(image_bytes));
  } catch (...) {
    allocator_.deallocate(values_);
    throw;
  }
  // Touch every page now so the per-frame path never takes a first-touch page fault.
  std::memset(values_, 0, values_bytes);
  std::memset(image_, 0, image_bytes);
  for (size_t i = 0; i < n_slots; ++i) {
    slots_[i].index = static_cast<uint32_t>(i);
    slots_[i].values = values_ + i * values_stride_;
    slots_[i].image = image_ + i * image_stride_;
    free_.try_push(&slots_[i]);
  }
}

FramePool::~FramePool() {
  allocator_.deallocate(values_);
  allocator_.deallocate(image_);
}

FrameSlot* FramePool::try_acquire() noexcept {
  FrameSlot* slot = nullptr;
  if (!free_.try_pop(slot)) return nullptr;
  slot->flags = 0;
  slot->dropped_before = 0;
  slot->device_time_ns = 0;
  slot->stamp_ns.fill(0);
  return slot;
}

void FramePool::release(FrameSlot* slot) noexcept { free_.try_push(slot); }

}  // namespace eit::pipeline
