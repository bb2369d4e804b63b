#pragma once
// BreathIndices: everything eitstream reports per breath, and BreathAnalyzer, which computes it
// from a detected breath and the frames kept in a FrameHistory. Definitions, units and sources:
// docs/indices.md. Impedance values are in the image's units (arbitrary units, a.u.) with
// eitstream's sign turned into impedance (inspiration raises them).
//
// Threads: one. Allocation: the constructor sizes every buffer; analyze() never allocates.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "eit/indices/body_layout.hpp"
#include "eit/indices/breath_detector.hpp"
#include "eit/indices/frame_history.hpp"

namespace eit::indices {

struct BreathIndexOptions {
  double lungspace_fraction = 0.15;  // lung space: mean tidal ≥ this × its maximum (TIVLungspace)
  double silent_fraction = 0.10;     // silent: tidal < this × the breath's maximum pixel tidal
  double rvd_threshold = 0.40;       // Muders: fraction of the regional amplitude
  size_t trend_breaths = 8;          // EELI trend: linear fit over this many breaths
  int lung_roi = -1;                 // ROI used as lung region for silent spaces; −1: lung space
};

struct BreathIndices {
  uint64_t number = 0;                      // 1, 2, … in the order breaths completed
  uint64_t start = 0, middle = 0, end = 0;  // frame numbers (0 = first frame pushed)
  uint64_t start_seq = 0, middle_seq = 0, end_seq = 0;
  int64_t start_ns = 0, middle_ns = 0, end_ns = 0;  // acquisition times
  double start_s = 0, middle_s = 0, end_s = 0;      // frame number / frame rate
  double rate_per_min = 0;                          // 60 / breath duration
  double inspiration_s = 0, expiration_s = 0;
  double tiv = 0;                   // global, inspiratory: Z(middle) − Z(start)
  double tiv_expiratory = 0;        // Z(middle) − Z(end)
  double eeli = 0, eili = 0;        // Z(end), Z(middle)
  double eeli_change = 0;           // EELI − previous breath's EELI (0 for the first)
  double eeli_trend_per_min = 0;    // slope of EELI over the last trend_breaths breaths
  bool pixel_data = false;          // the whole breath was in the frame history
  double cov_vertical = 0;          // % of the body's extent, 0 = ventral edge, 100 = dorsal
  double cov_horizontal = 0;        // %, 0 = patient's right edge, 100 = left
  double gi = 0;                    // global inhomogeneity index (lung space)
  double rvd_mean = 0, rvd_sd = 0;  // % of inspiratory time; rvd_sd is the RVD index
  size_t rvd_pixels = 0;
  double silent_dependent = 0, silent_nondependent = 0;  // % of the lung region
  size_t lung_pixels = 0;           // lung space of the mean tidal image so far
  size_t breaths_in_mean = 0;       // breaths averaged into mean_tidal
  std::vector<double> region_tiv;   // tidal variation per region (BodyLayout's order)
  std::vector<double> tidal;        // pixel tidal image; NaN outside the body
  std::vector<double> mean_tidal;   // mean of the tidal images so far
  std::vector<uint8_t> lung_space;  // mean_tidal ≥ lungspace_fraction · max
  std::vector<float> rvd;           // % of inspiratory time; NaN where undefined
};

class BreathAnalyzer {
 public:
  BreathAnalyzer(const BodyLayout& layout, double rate_hz, BreathIndexOptions options = {});

  // Fills `out` for the breath (global values from the detector, pixels from history).
  void analyze(const DetectedBreath& breath, const FrameHistory& history,
               BreathIndices& out) noexcept;
  // A BreathIndices with every buffer sized for this layout.
  BreathIndices make_result() const;
  uint64_t breaths_without_pixels() const noexcept { return no_pixels_; }

 private:
  void pixel_indices(const DetectedBreath& b, const FrameHistory& h, BreathIndices& out) noexcept;
  double eeli_trend() const noexcept;

  const BodyLayout& layout_;
  double rate_hz_;
  BreathIndexOptions options_;
  std::vector<double> tidal_sum_;  // running sum of tidal images
  size_t tidal_count_ = 0;
  std::vector<double> scratch_;
  std::vector<double> eeli_t_, eeli_v_;  // ring for the trend
  size_t eeli_count_ = 0;
  uint64_t number_ = 0, no_pixels_ = 0;
  double prev_eeli_ = 0;
};

}  // namespace eit::indices
