#pragma once
// IndicesEngine: the clinical indices of a stream of images, frame by frame. Per frame it turns
// the image into impedance (sign), sums the body and its regions, keeps the frame in a history
// and feeds the global value to the online breath detector; when a breath completes it analyses
// it. Pure computation: no I/O, no threads, no clock.
//
// Threads: one (the caller's). Allocation: the constructor only; push() never allocates, throws
// or logs (measured in tests/indices/test_allocation_free.cpp).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "eit/indices/body_layout.hpp"
#include "eit/indices/breath_detector.hpp"
#include "eit/indices/breath_indices.hpp"
#include "eit/indices/frame_history.hpp"

namespace eit::indices {

struct IndicesOptions {
  double rate_hz = 0;    // frame rate (required)
  double sign = -1.0;    // impedance = sign · image; eitstream images are conductivity change
  double history_s = 0;  // frames kept for pixel indices; 0: max_breath_s of the detector
  BreathDetectionOptions breath;
  BreathIndexOptions per_breath;
};

class IndicesEngine {
 public:
  // Takes the layout (the engine keeps it). Throws std::invalid_argument for a bad rate/option.
  IndicesEngine(BodyLayout layout, IndicesOptions options);

  // One frame: `image` has layout().n_out() values; `valid` = false for a frame flagged bad.
  // Returns the breath that completed with this frame, or nullptr; the pointer stays valid until
  // the next push().
  const BreathIndices* push(std::span<const float> image, uint64_t seq, int64_t t_ns,
                            bool valid = true) noexcept;

  // End of the data: the breaths the detector still holds (OnlineBreathDetector::flush). Call
  // until it returns nullptr; push() must not be called afterwards.
  const BreathIndices* finish() noexcept;

  // The last frame's region sums, BodyLayout's order (global first).
  std::span<const double> regions() const noexcept { return regions_; }
  double global() const noexcept { return regions_[0]; }
  uint64_t frames() const noexcept { return history_.count(); }
  uint64_t breaths() const noexcept { return breaths_; }
  const BodyLayout& layout() const noexcept { return *layout_; }
  const IndicesOptions& options() const noexcept { return options_; }
  const OnlineBreathDetector& detector() const noexcept { return detector_; }
  const BreathAnalyzer& analyzer() const noexcept { return analyzer_; }

 private:
  // On the heap: the analyzer keeps a reference to it, which must survive moving the engine.
  std::unique_ptr<const BodyLayout> layout_;
  IndicesOptions options_;
  OnlineBreathDetector detector_;
  FrameHistory history_;
  BreathAnalyzer analyzer_;
  std::vector<double> regions_, cells_;
  BreathIndices result_;
  uint64_t breaths_ = 0;
};

}  // namespace eit::indices
