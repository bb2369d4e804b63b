#pragma once
// OnlineBreathDetector: eitprocessing's BreathDetection (peaks and valleys of the global impedance
// against a Blackman moving average, a minimum breath duration, an amplitude cut-off against the
// median amplitude, an invalid-data guard) turned into a streaming detector. One sample in per
// frame; a breath (start valley, end-inspiratory peak, end valley) comes out once the peak of the
// next breath is confirmed, i.e. the inspiration of the next breath plus the minimum duration
// after the breath ends (less than one breath for breaths longer than about twice that).
//
// What is computed from the data received so far, where eitprocessing sees the whole record
// (docs/indices.md lists every difference):
//   - the moving average at a candidate extremum is eitprocessing's MovingAverage applied to the
//     samples received up to that candidate's detection (edge-padded at the live end, as
//     eitprocessing pads at the record's end);
//   - the minimum distance keeps a candidate unless a more extreme candidate lies within it;
//   - the amplitude cut-off uses the median amplitude of the last `median_breaths` breaths;
//   - the invalid-data cut-offs use the mean and percentiles of the history, refreshed every
//     second; an invalid sample holds the last valid value; frames flagged bad are invalid too.
//
// Threads: one thread (the caller's). Allocation: only in the constructor; push() never allocates,
// throws or logs.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace eit::indices {

// Upper limits of the options below: a breath of two minutes is no longer breathing, and the
// history the engine keeps grows with them (frames × pixels).
inline constexpr double kMaxBreathS = 120.0;
inline constexpr double kMaxWindowS = 60.0;

struct BreathDetectionOptions {
  double minimum_duration_s = 2.0 / 3.0;    // eitprocessing minimum_duration
  double averaging_window_s = 15.0;         // averaging_window_duration (Blackman window)
  double amplitude_cutoff_fraction = 0.25;  // 0: no amplitude cut-off
  double invalid_window_s = 0.5;            // invalid_data_removal_window_length
  double invalid_percentile = 5;            // invalid_data_removal_percentile
  double invalid_multiplier = 4;            // invalid_data_removal_multiplier
  size_t median_breaths = 32;               // breaths in the running median amplitude
  double max_breath_s = 20.0;               // history kept for a breath in progress
};

// Sample indices count frames pushed, from 0.
struct DetectedBreath {
  uint64_t start = 0, middle = 0, end = 0;  // valley, peak, valley
  double start_value = 0, middle_value = 0, end_value = 0;
  double amplitude = 0;  // mean of inspiratory and expiratory amplitudes
};

class OnlineBreathDetector {
 public:
  // Throws std::invalid_argument for a non-positive rate or options out of range.
  OnlineBreathDetector(double sample_rate_hz, BreathDetectionOptions options = {});

  // One sample of the global signal; `valid` = false for a frame known to be bad (non-finite,
  // gap). Returns a breath when one completes with this sample.
  std::optional<DetectedBreath> push(double value, bool valid = true) noexcept;

  // End of the data (end of a file, series end): decides every pending candidate and keeps the
  // last breath when the data after its end valley reach the moving average there, as
  // eitprocessing does at a record's end. Call repeatedly until it returns nothing; push() must
  // not be called afterwards.
  std::optional<DetectedBreath> flush() noexcept;

  uint64_t samples() const noexcept { return n_; }
  // The signal as the detector sees it (invalid samples replaced), for i within the history.
  double value(uint64_t i) const noexcept { return data_[i % capacity_]; }
  bool in_history(uint64_t i) const noexcept { return i < n_ && n_ - i <= capacity_; }
  uint64_t invalid_samples() const noexcept { return invalid_count_; }
  uint64_t dropped_breaths() const noexcept { return dropped_invalid_ + dropped_low_; }
  // Detection delay bound after a breath's end, in samples (minimum distance); informative.
  size_t distance_samples() const noexcept { return distance_; }
  size_t window_samples() const noexcept { return window_; }
  const BreathDetectionOptions& options() const noexcept { return options_; }

 private:
  struct Candidate {
    uint64_t index = 0;
    double value = 0;  // signed as detected: peaks +x, valleys −x
    double ma = 0;     // signed moving average at detection
    bool decided = false;
  };
  struct Extremum {
    uint64_t index = 0;
    double value = 0;
    double ma = 0;  // moving average at the extremum when it was detected
  };
  // One stream of candidates (peaks, or valleys on the inverted signal).
  struct CandidateStream {
    bool inverted = false;
    std::vector<Candidate> pending;  // passed the height test, distance not yet decided
    size_t count = 0;
    uint64_t rise_start = 0;  // plateau tracking: where x last rose
    bool rising = false;
  };

  void detect_candidate(CandidateStream& s, uint64_t latest) noexcept;
  void decide(CandidateStream& s, uint64_t now, bool is_peak) noexcept;
  double moving_average_at(uint64_t i) noexcept;
  void on_valley(const Extremum& v) noexcept;
  void on_peak(const Extremum& p) noexcept;
  void complete_breath(const Extremum& next_peak) noexcept;
  void refresh_cutoffs() noexcept;
  bool invalid_near(uint64_t from, uint64_t to) const noexcept;
  double running_median() noexcept;

  double rate_hz_;
  BreathDetectionOptions options_;
  size_t capacity_;                   // history length (samples)
  size_t window_;                     // moving-average window (odd)
  size_t distance_;                   // ceil(minimum duration · rate), ≥ 1
  size_t invalid_window_;             // ceil(invalid_window_s · rate)
  std::vector<double> data_;          // cleaned signal ring
  std::vector<uint8_t> invalid_;      // ring: 1 where the sample was invalid
  std::vector<double> weights_full_;  // Blackman weights of the full window, normalised
  std::vector<double> scratch_;       // percentiles, medians
  std::vector<double> amplitudes_;    // ring of the last median_breaths amplitudes
  size_t amplitude_count_ = 0;
  uint64_t n_ = 0;
  double last_valid_ = 0;
  bool have_valid_ = false;
  double cutoff_low_ = 0, cutoff_high_ = 0;
  bool have_cutoffs_ = false;
  uint64_t next_refresh_ = 0;
  uint64_t invalid_count_ = 0, last_invalid_ = UINT64_MAX;

  CandidateStream peaks_, valleys_;
  // Breath assembly: start valley, highest peak after it, lowest valley after that.
  std::optional<Extremum> v_start_, peak_, v_end_;
  bool start_checked_ = false;  // the first valley passed eitprocessing's edge test
  std::optional<DetectedBreath> ready_;
  std::optional<DetectedBreath> waiting_;  // complete, waiting for the invalid-data window
  bool flushing_ = false;
  uint64_t dropped_invalid_ = 0, dropped_low_ = 0;
};

}  // namespace eit::indices
