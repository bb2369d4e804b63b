// OnlineBreathDetector: see the header for the contract and docs/indices.md for how each step
// corresponds to eitprocessing's BreathDetection (facts and formulas only; no code carried over).
#include "eit/indices/breath_detector.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include <fmt/format.h>

namespace eit::indices {
namespace {

// np.blackman(M): 0.42 − 0.5 cos(2πk/(M−1)) + 0.08 cos(4πk/(M−1)), k = 0…M−1; [1] for M = 1.
void blackman(size_t m, double* out) noexcept {
  if (m == 1) {
    out[0] = 1.0;
    return;
  }
  const double d = static_cast<double>(m - 1);
  double sum = 0;
  for (size_t k = 0; k < m; ++k) {
    const double a = 2.0 * std::numbers::pi * static_cast<double>(k) / d;
    out[k] = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2.0 * a);
    sum += out[k];
  }
  for (size_t k = 0; k < m; ++k) out[k] /= sum;
}

// numpy's default ("linear") percentile of the n values in v (reordered in place).
double percentile(double* v, size_t n, double p) noexcept {
  const double pos = p / 100.0 * static_cast<double>(n - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const double frac = pos - static_cast<double>(lo);
  std::nth_element(v, v + lo, v + n);
  const double a = v[lo];
  if (frac == 0 || lo + 1 >= n) return a;
  const double b = *std::min_element(v + lo + 1, v + n);
  return a + (b - a) * frac;
}

}  // namespace

OnlineBreathDetector::OnlineBreathDetector(double sample_rate_hz, BreathDetectionOptions options)
    : rate_hz_(sample_rate_hz), options_(options) {
  if (!(rate_hz_ > 0) || !std::isfinite(rate_hz_))
    throw std::invalid_argument(
        fmt::format("breath detection: sample rate {} Hz, expected > 0", sample_rate_hz));
  if (!(options_.minimum_duration_s > 0) || !(options_.averaging_window_s > 0) ||
      options_.amplitude_cutoff_fraction < 0 || options_.amplitude_cutoff_fraction >= 1 ||
      options_.invalid_window_s < 0 || !(options_.invalid_percentile >= 0) ||
      options_.invalid_percentile >= 50 || !(options_.invalid_multiplier > 0) ||
      options_.median_breaths == 0 || !(options_.max_breath_s > options_.minimum_duration_s) ||
      !(options_.max_breath_s <= kMaxBreathS) || !(options_.averaging_window_s <= kMaxWindowS) ||
      !(options_.invalid_window_s <= kMaxWindowS) || !std::isfinite(options_.invalid_multiplier))
    throw std::invalid_argument(fmt::format(
        "breath detection: options out of range (durations > 0, windows ≤ {} s, max breath ≤ {} "
        "s and > minimum, 0 ≤ amplitude cut-off < 1, 0 ≤ percentile < 50, multiplier > 0, "
        "median breaths ≥ 1)",
        kMaxWindowS, kMaxBreathS));
  // eitprocessing: window = int(rate · duration), made odd by adding one.
  window_ = static_cast<size_t>(rate_hz_ * options_.averaging_window_s);
  if (window_ % 2 == 0) ++window_;
  // scipy's find_peaks uses ceil(distance) with distance = max(minimum_duration · rate, 1).
  distance_ = static_cast<size_t>(std::ceil(std::max(options_.minimum_duration_s * rate_hz_, 1.0)));
  invalid_window_ = static_cast<size_t>(std::ceil(options_.invalid_window_s * rate_hz_));
  const size_t max_breath = static_cast<size_t>(std::ceil(options_.max_breath_s * rate_hz_));
  capacity_ = std::max(window_, max_breath) + 4 * distance_ + 2 * invalid_window_ + 16;
  data_.assign(capacity_, 0.0);
  invalid_.assign(capacity_, 0);
  weights_full_.assign(window_, 0.0);
  blackman(window_, weights_full_.data());
  scratch_.assign(std::max(capacity_, window_), 0.0);
  amplitudes_.assign(options_.median_breaths, 0.0);
  for (auto* s : {&peaks_, &valleys_}) s->pending.reserve(2 * distance_ + 16);
  valleys_.inverted = true;
  next_refresh_ = window_;  // the guard starts once one averaging window has been seen
}

std::optional<DetectedBreath> OnlineBreathDetector::push(double value, bool valid) noexcept {
  const uint64_t i = n_;
  bool bad = !valid || !std::isfinite(value);
  if (!bad && have_cutoffs_ && (value < cutoff_low_ || value > cutoff_high_)) bad = true;
  if (bad) {
    ++invalid_count_;
    last_invalid_ = i;
    value = have_valid_ ? last_valid_ : 0.0;
  } else {
    last_valid_ = value;
    have_valid_ = true;
  }
  data_[i % capacity_] = value;
  invalid_[i % capacity_] = bad ? 1 : 0;
  ++n_;
  if (n_ >= next_refresh_) {
    refresh_cutoffs();
    next_refresh_ = n_ + std::max<uint64_t>(1, static_cast<uint64_t>(std::lround(rate_hz_)));
  }
  if (n_ >= 2) {
    detect_candidate(peaks_, i);
    detect_candidate(valleys_, i);
  }
  if (n_ > distance_) {
    // Decide both streams for index now − distance, in index order (a peak and a valley never
    // share an index, and each call decides at most the candidates that just matured).
    const uint64_t now = i;
    uint64_t pi = UINT64_MAX, vi = UINT64_MAX;
    for (const auto& c : peaks_.pending)
      if (c.index + distance_ <= now && c.index < pi) pi = c.index;
    for (const auto& c : valleys_.pending)
      if (c.index + distance_ <= now && c.index < vi) vi = c.index;
    if (vi < pi) {
      decide(valleys_, now, false);
      decide(peaks_, now, true);
    } else {
      decide(peaks_, now, true);
      decide(valleys_, now, false);
    }
  }
  if (waiting_ && n_ >= waiting_->end + invalid_window_) {
    const uint64_t from =
        waiting_->start >= invalid_window_ ? waiting_->start - invalid_window_ : 0;
    if (invalid_near(from, waiting_->end + invalid_window_))
      ++dropped_invalid_;
    else
      ready_ = waiting_;
    waiting_.reset();
  }
  std::optional<DetectedBreath> out;
  out.swap(ready_);
  return out;
}

std::optional<DetectedBreath> OnlineBreathDetector::flush() noexcept {
  std::optional<DetectedBreath> out;
  if (!flushing_) {
    flushing_ = true;
    if (n_ > 0) {
      const uint64_t end = n_ - 1 + distance_;  // every candidate is decided
      for (uint64_t now = n_ > distance_ ? n_ - 1 : 0; now <= end; ++now) {
        decide(valleys_, now, false);
        decide(peaks_, now, true);
      }
    }
    // A breath still open: keep it when its end valley is a real valley (the data after it
    // reach the moving average there), eitprocessing's rule for the record's last valley.
    if (v_start_ && peak_ && v_end_) {
      double mx = -INFINITY;
      for (uint64_t j = v_end_->index; j < n_; ++j)
        if (in_history(j)) mx = std::max(mx, value(j));
      if (mx >= v_end_->ma) {
        const Extremum none{};
        complete_breath(none);
      }
    }
  }
  if (ready_) {
    out.swap(ready_);
    return out;
  }
  if (waiting_) {
    const uint64_t from =
        waiting_->start >= invalid_window_ ? waiting_->start - invalid_window_ : 0;
    if (invalid_near(from, waiting_->end + invalid_window_))
      ++dropped_invalid_;
    else
      out = waiting_;
    waiting_.reset();
    if (!out) return flush();
  }
  return out;
}

// scipy's local maxima, streaming: a rise, an optional plateau, a fall; the candidate sits in the
// middle of the plateau (rounded down).
void OnlineBreathDetector::detect_candidate(CandidateStream& s, uint64_t k) noexcept {
  const double sign = s.inverted ? -1.0 : 1.0;
  const double now = sign * value(k), before = sign * value(k - 1);
  if (now > before) {
    s.rising = true;
    s.rise_start = k;
  } else if (now < before && s.rising) {
    s.rising = false;
    const uint64_t c = (s.rise_start + (k - 1)) / 2;
    const double x = sign * value(c);
    const double ma = sign * moving_average_at(c);
    if (x >= ma) {  // find_peaks' height condition (inclusive)
      if (s.pending.size() == s.pending.capacity()) s.pending.erase(s.pending.begin());
      s.pending.push_back({c, x, ma, false});
    }
  }
}

// The minimum distance: a candidate is kept unless a more extreme one (or an equal later one, as
// scipy orders equal heights) lies closer than `distance_`.
void OnlineBreathDetector::decide(CandidateStream& s, uint64_t now, bool is_peak) noexcept {
  for (auto& c : s.pending) {
    if (c.decided || c.index + distance_ > now) continue;
    c.decided = true;
    bool keep = true;
    for (const auto& o : s.pending) {
      if (&o == &c) continue;
      const uint64_t gap = o.index > c.index ? o.index - c.index : c.index - o.index;
      if (gap >= distance_) continue;
      if (o.value > c.value || (o.value == c.value && o.index > c.index)) {
        keep = false;
        break;
      }
    }
    if (keep) {
      const Extremum e{c.index, value(c.index), s.inverted ? -c.ma : c.ma};
      if (is_peak)
        on_peak(e);
      else
        on_valley(e);
    }
  }
  // Forget decided candidates that can no longer affect a later decision.
  auto old = [&](const Candidate& c) { return c.decided && c.index + 2 * distance_ < now; };
  s.pending.erase(std::remove_if(s.pending.begin(), s.pending.end(), old), s.pending.end());
}

// eitprocessing's MovingAverage over the samples received so far, evaluated at i.
double OnlineBreathDetector::moving_average_at(uint64_t i) noexcept {
  const uint64_t len = n_;
  size_t w = window_;
  const double* weights = weights_full_.data();
  if (w > len) {
    w = static_cast<size_t>((len - 1) / 2) * 2 + 1;
    blackman(w, scratch_.data());
    weights = scratch_.data();
  }
  const int64_t h = static_cast<int64_t>((w - 1) / 2);
  const int64_t first = static_cast<int64_t>(len > capacity_ ? len - capacity_ : 0);
  const int64_t last = static_cast<int64_t>(len) - 1;
  const int64_t lo = static_cast<int64_t>(i) - h, hi = static_cast<int64_t>(i) + h;
  // Taps before `first` and after `last` take the edge values (np.pad mode "edge"); the rest is
  // a dot product over at most two contiguous pieces of the ring (no modulo per tap).
  const int64_t a = std::max(lo, first), z = std::min(hi, last);
  double sum = 0, pad_lo = 0, pad_hi = 0;
  for (int64_t k = 0; k < a - lo; ++k) pad_lo += weights[k];
  for (int64_t k = z - lo + 1; k < static_cast<int64_t>(w); ++k) pad_hi += weights[k];
  sum += pad_lo * data_[static_cast<uint64_t>(first) % capacity_];
  sum += pad_hi * data_[static_cast<uint64_t>(last) % capacity_];
  int64_t j = a;
  while (j <= z) {
    const size_t pos = static_cast<uint64_t>(j) % capacity_;
    const int64_t run = std::min<int64_t>(z - j + 1, static_cast<int64_t>(capacity_ - pos));
    const double* x = &data_[pos];
    const double* wk = weights + (j - lo);
    double s = 0;
    for (int64_t k = 0; k < run; ++k) s += wk[k] * x[k];
    sum += s;
    j += run;
  }
  return sum;
}

void OnlineBreathDetector::on_valley(const Extremum& v) noexcept {
  if (!start_checked_) {
    start_checked_ = true;
    // eitprocessing drops the first valley when the data before it never reach the moving
    // average at the valley (it may be a cut-off slope, not a valley).
    if (in_history(0)) {
      double mx = -INFINITY;
      for (uint64_t j = 0; j < v.index; ++j) mx = std::max(mx, value(j));
      if (mx < v.ma) return;
    }
  }
  if (!v_start_) {
    v_start_ = v;
  } else if (!peak_) {
    if (v.value < v_start_->value) v_start_ = v;
  } else if (!v_end_) {
    v_end_ = v;
  } else if (v.value < v_end_->value) {
    v_end_ = v;
  }
}

void OnlineBreathDetector::on_peak(const Extremum& p) noexcept {
  if (!v_start_) return;  // peaks before the first valley do not count
  if (!v_end_) {
    if (!peak_ || p.value > peak_->value) peak_ = p;
    return;
  }
  complete_breath(p);
}

void OnlineBreathDetector::complete_breath(const Extremum& next_peak) noexcept {
  DetectedBreath b;
  b.start = v_start_->index;
  b.middle = peak_->index;
  b.end = v_end_->index;
  b.start_value = v_start_->value;
  b.middle_value = peak_->value;
  b.end_value = v_end_->value;
  b.amplitude = ((b.middle_value - b.start_value) + (b.middle_value - b.end_value)) / 2.0;
  amplitudes_[amplitude_count_ % amplitudes_.size()] = b.amplitude;
  ++amplitude_count_;
  const bool low = options_.amplitude_cutoff_fraction > 0 &&
                   b.amplitude < options_.amplitude_cutoff_fraction * running_median();
  if (low) {
    // The peak goes; of its two valleys the lower stays (the earlier one on a tie).
    ++dropped_low_;
    if (v_end_->value < v_start_->value) v_start_ = v_end_;
  } else {
    if (waiting_) ready_ = waiting_;  // cannot happen for breaths longer than the guard window
    waiting_ = b;
    v_start_ = v_end_;
  }
  peak_ = next_peak;
  v_end_.reset();
}

void OnlineBreathDetector::refresh_cutoffs() noexcept {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(n_, capacity_));
  if (n < 2) return;
  double mean = 0;
  for (size_t k = 0; k < n; ++k) {
    scratch_[k] = data_[(n_ - n + k) % capacity_];
    mean += scratch_[k];
  }
  mean /= static_cast<double>(n);
  const double lo = percentile(scratch_.data(), n, options_.invalid_percentile);
  const double hi = percentile(scratch_.data(), n, 100.0 - options_.invalid_percentile);
  cutoff_low_ = mean - (mean - lo) * options_.invalid_multiplier;
  cutoff_high_ = mean + (hi - mean) * options_.invalid_multiplier;
  have_cutoffs_ = true;
}

bool OnlineBreathDetector::invalid_near(uint64_t from, uint64_t to) const noexcept {
  if (last_invalid_ == UINT64_MAX || last_invalid_ < from) return false;
  for (uint64_t j = from; j < to && j < n_; ++j)
    if (in_history(j) && invalid_[j % capacity_]) return true;
  return false;
}

double OnlineBreathDetector::running_median() noexcept {
  const size_t n = std::min(amplitude_count_, amplitudes_.size());
  std::copy_n(amplitudes_.begin(), n, scratch_.begin());
  const size_t mid = n / 2;
  std::nth_element(scratch_.begin(), scratch_.begin() + mid, scratch_.begin() + n);
  const double upper = scratch_[mid];
  if (n % 2 == 1) return upper;
  const double lower = *std::max_element(scratch_.begin(), scratch_.begin() + mid);
  return (lower + upper) / 2.0;
}

}  // namespace eit::indices
