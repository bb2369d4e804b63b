#pragma once
// Reference handling: where v_ref comes from. The model's own v_ref, given values, or the mean of N
// frames of the stream, captured at start (`first:N`) and again whenever someone asks
// (request(), from any thread, e.g. a UI or the CLI; the stage picks the request up between
// frames).
//
// Threads: request() from any thread (one atomic store); everything else on the reconstructor
// stage thread only. Accumulation is in double, into buffers allocated at construction: add()
// never allocates.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace eit::pipeline {

enum class ReferenceMode {
  kModel,    // the model's v_ref (set-up error when the model has none)
  kCapture,  // the mean of the first `capture_frames` finite frames
  kGiven,    // `values` (e.g. the synthetic phantom's homogeneous frame)
};

struct ReferenceOptions {
  ReferenceMode mode = ReferenceMode::kModel;
  size_t capture_frames = 0;   // kCapture only, ≥ 1
  std::vector<double> values;  // kGiven only, n_meas values
};

class ReferenceCapture {
 public:
  explicit ReferenceCapture(size_t n_meas) : sum_(n_meas, 0.0), mean_(n_meas, 0.0) {}

  // Any thread: capture a new reference from the next n_frames finite frames.
  void request(size_t n_frames) noexcept {
    requested_.store(n_frames == 0 ? 1 : n_frames, std::memory_order_release);
  }

  // Stage thread: capture again as many frames as the last capture took (its mean was refused).
  void request_again() noexcept { request(last_frames_); }
  // Stage thread. Starts a requested capture unless one is running; true when it started one.
  bool start_if_requested() noexcept;
  bool capturing() const noexcept { return target_ > 0; }
  // Stage thread. Adds one frame's values (caller skips non-finite frames); true when this frame
  // completes the capture, after which mean() holds the new reference.
  bool add(const float* values) noexcept;
  std::span<const double> mean() const noexcept { return mean_; }
  uint64_t completed() const noexcept { return completed_.load(std::memory_order_relaxed); }

 private:
  std::atomic<size_t> requested_{0};
  std::vector<double> sum_, mean_;
  size_t target_ = 0, added_ = 0, last_frames_ = 1;
  std::atomic<uint64_t> completed_{0};
};

}  // namespace eit::pipeline
