#pragma once
// IndicesEngine: the clinical indices of a stream of images, frame by frame. Per frame it turns
// the image into impedance (sign), sums the body and its regions, keeps the frame in a history
// and feeds the global value to the online breath detector; when a breath completes it analyses
// it. Pure computation: no I/O, no threads, no clock.
//
// Threads: one (the caller's). Allocation: the constructor only; push() never allocates, throws
// or logs (measured in tests/indices/test_allocation_free.cpp).
#include <array>
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
  // Frames missing before it (seq more than one past the last frame's) are filled in, so that
  // breath times and rates stay those of the recording: a gap of at most kMaxInterpolatedGapS
  // with images interpolated between its two neighbours (valid samples: breathing is smooth at
  // that scale), a longer one with invalid frames holding the last image (breaths near it are
  // dropped, as near any invalid data), at most kMaxGapFillS of them (the rest shifts later times
  // and is counted in unfilled_frames()). Returns a breath that completed, or nullptr; the
  // pointer stays valid until the next push().
  const BreathIndices* push(std::span<const float> image, uint64_t seq, int64_t t_ns,
                            bool valid = true) noexcept;

  // End of the data: the breaths the detector still holds (OnlineBreathDetector::flush). Call
  // until it returns nullptr; push() must not be called afterwards.
  const BreathIndices* finish() noexcept;

  // The last frame's region sums, BodyLayout's order (global first).
  std::span<const double> regions() const noexcept { return regions_; }
  double global() const noexcept { return regions_[0]; }
  uint64_t frames() const noexcept { return history_.count(); }  // gap frames included
  uint64_t gap_frames() const noexcept { return gap_frames_; }   // frames filled in for gaps
  uint64_t unfilled_frames() const noexcept { return unfilled_frames_; }
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
  // Breaths found but not yet returned (a gap's frames and the frame after it may each
  // complete one); push() and finish() return them one at a time, oldest first.
  std::array<DetectedBreath, 4> found_{};
  size_t found_count_ = 0;
  std::vector<float> gap_image_;  // the last image, repeated or interpolated into a gap
  std::vector<float> new_image_;  // the frame being pushed, signed, until the gap is filled
  uint64_t last_seq_ = 0;
  uint64_t gap_frames_ = 0, unfilled_frames_ = 0;

  void fill_gap(uint64_t missing, int64_t t_ns, double new_global) noexcept;
  void keep(const std::optional<DetectedBreath>& b) noexcept;
  const BreathIndices* next_found() noexcept;
};

// The longest gap filled with interpolated frames, and the longest filled at all (10 minutes).
inline constexpr double kMaxInterpolatedGapS = 0.2;
inline constexpr double kMaxGapFillS = 600.0;

}  // namespace eit::indices
