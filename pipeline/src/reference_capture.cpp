#include "eit/pipeline/reference_capture.hpp"

#include <algorithm>

namespace eit::pipeline {

bool ReferenceCapture::start_if_requested() noexcept {
  if (target_ > 0) return false;
  const size_t n = requested_.exchange(0, std::memory_order_acq_rel);
  if (n == 0) return false;
  target_ = n;
  last_frames_ = n;
  added_ = 0;
  std::fill(sum_.begin(), sum_.end(), 0.0);
  return true;
}

bool ReferenceCapture::add(const float* values) noexcept {
  if (target_ == 0) return false;
  for (size_t i = 0; i < sum_.size(); ++i) sum_[i] += values[i];
  if (++added_ < target_) return false;
  const double inv = 1.0 / static_cast<double>(added_);
  for (size_t i = 0; i < sum_.size(); ++i) mean_[i] = sum_[i] * inv;
  target_ = 0;
  completed_.store(completed_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return true;
}

}  // namespace eit::pipeline
