#pragma once
// FrameHistory: the last `capacity` frames (impedance image, global value, seq, time), so that a
// breath can be analysed pixel by pixel once the detector has found where it started and peaked.
// Frames are numbered by the order they were pushed (as OnlineBreathDetector numbers samples).
//
// Threads: one. Allocation: the constructor only (capacity × n_out floats); push() copies.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace eit::indices {

class FrameHistory {
 public:
  FrameHistory(size_t capacity, size_t n_out)
      : capacity_(std::max<size_t>(capacity, 1)),
        n_out_(n_out),
        images_(capacity_ * n_out),
        global_(capacity_),
        seq_(capacity_),
        time_(capacity_) {}

  // Stores frame number count() (then count() grows by one).
  float* next_image() noexcept { return &images_[(count_ % capacity_) * n_out_]; }
  void commit(double global, uint64_t seq, int64_t t_ns) noexcept {
    const size_t k = count_ % capacity_;
    global_[k] = global;
    seq_[k] = seq;
    time_[k] = t_ns;
    ++count_;
  }

  uint64_t count() const noexcept { return count_; }
  size_t capacity() const noexcept { return capacity_; }
  bool holds(uint64_t i) const noexcept { return i < count_ && count_ - i <= capacity_; }
  std::span<const float> image(uint64_t i) const noexcept {
    return {&images_[(i % capacity_) * n_out_], n_out_};
  }
  double global(uint64_t i) const noexcept { return global_[i % capacity_]; }
  uint64_t seq(uint64_t i) const noexcept { return seq_[i % capacity_]; }
  int64_t time_ns(uint64_t i) const noexcept { return time_[i % capacity_]; }

 private:
  size_t capacity_, n_out_;
  std::vector<float> images_;
  std::vector<double> global_;
  std::vector<uint64_t> seq_;
  std::vector<int64_t> time_;
  uint64_t count_ = 0;
};

}  // namespace eit::indices
