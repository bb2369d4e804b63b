// BreathAnalyzer: the per-breath indices of docs/indices.md, from a detected breath and the
// impedance frames around it.
#include "eit/indices/breath_indices.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/indices/region_sums.hpp"

namespace eit::indices {
namespace {
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
}

BreathAnalyzer::BreathAnalyzer(const BodyLayout& layout, double rate_hz, BreathIndexOptions options)
    : layout_(layout),
      rate_hz_(rate_hz),
      options_(options),
      tidal_sum_(layout.n_out(), 0.0),
      scratch_(std::max<size_t>(layout.n_out(), 4 * static_cast<size_t>(layout.layers()))),
      eeli_t_(std::max<size_t>(options.trend_breaths, 2)),
      eeli_v_(std::max<size_t>(options.trend_breaths, 2)) {
  const auto in = [](double v, double lo, double hi) { return v >= lo && v <= hi; };
  if (!in(options.lungspace_fraction, 0, 1) || options.lungspace_fraction == 0 ||
      !in(options.silent_fraction, 0, 1) || !in(options.rvd_threshold, 0, 1) ||
      options.rvd_threshold == 0 || options.rvd_threshold == 1 || options.trend_breaths < 2)
    throw std::invalid_argument(fmt::format(
        "breath indices: lung space fraction {} (expected in (0, 1]), silent fraction {} ([0, "
        "1]), RVD threshold {} ((0, 1)), trend breaths {} (≥ 2)",
        options.lungspace_fraction, options.silent_fraction, options.rvd_threshold,
        options.trend_breaths));
}

BreathIndices BreathAnalyzer::make_result() const {
  BreathIndices r;
  r.region_tiv.assign(layout_.n_regions(), 0.0);
  r.tidal.assign(layout_.n_out(), std::numeric_limits<double>::quiet_NaN());
  r.mean_tidal.assign(layout_.n_out(), std::numeric_limits<double>::quiet_NaN());
  r.lung_space.assign(layout_.n_out(), 0);
  r.rvd.assign(layout_.n_out(), kNaN);
  return r;
}

void BreathAnalyzer::analyze(const DetectedBreath& b, const FrameHistory& h,
                             BreathIndices& out) noexcept {
  out.number = ++number_;
  out.start = b.start;
  out.middle = b.middle;
  out.end = b.end;
  auto frame_meta = [&](uint64_t i, uint64_t& seq, int64_t& t) {
    seq = h.holds(i) ? h.seq(i) : 0;
    t = h.holds(i) ? h.time_ns(i) : 0;
  };
  frame_meta(b.start, out.start_seq, out.start_ns);
  frame_meta(b.middle, out.middle_seq, out.middle_ns);
  frame_meta(b.end, out.end_seq, out.end_ns);
  out.start_s = static_cast<double>(b.start) / rate_hz_;
  out.middle_s = static_cast<double>(b.middle) / rate_hz_;
  out.end_s = static_cast<double>(b.end) / rate_hz_;
  out.inspiration_s = out.middle_s - out.start_s;
  out.expiration_s = out.end_s - out.middle_s;
  out.rate_per_min = 60.0 / (out.end_s - out.start_s);
  out.tiv = b.middle_value - b.start_value;
  out.tiv_expiratory = b.middle_value - b.end_value;
  out.eeli = b.end_value;
  out.eili = b.middle_value;
  out.eeli_change = out.number > 1 ? out.eeli - prev_eeli_ : 0.0;
  prev_eeli_ = out.eeli;
  const size_t k = eeli_count_ % eeli_t_.size();
  eeli_t_[k] = out.end_s;
  eeli_v_[k] = out.eeli;
  ++eeli_count_;
  out.eeli_trend_per_min = eeli_trend();

  out.pixel_data = h.holds(b.start) && h.holds(b.end);
  if (out.pixel_data)
    pixel_indices(b, h, out);
  else
    ++no_pixels_;
}

// Least-squares slope of EELI against time over the kept breaths, per minute.
double BreathAnalyzer::eeli_trend() const noexcept {
  const size_t n = std::min(eeli_count_, eeli_t_.size());
  if (n < 2) return 0.0;
  double mt = 0, mv = 0;
  for (size_t i = 0; i < n; ++i) {
    mt += eeli_t_[i];
    mv += eeli_v_[i];
  }
  mt /= static_cast<double>(n);
  mv /= static_cast<double>(n);
  double stt = 0, stv = 0;
  for (size_t i = 0; i < n; ++i) {
    stt += (eeli_t_[i] - mt) * (eeli_t_[i] - mt);
    stv += (eeli_t_[i] - mt) * (eeli_v_[i] - mv);
  }
  return stt > 0 ? 60.0 * stv / stt : 0.0;
}

void BreathAnalyzer::pixel_indices(const DetectedBreath& b, const FrameHistory& h,
                                   BreathIndices& out) noexcept {
  const auto& idx = layout_.inside_index();
  const auto z0 = h.image(b.start), zm = h.image(b.middle);
  // Tidal image (inspiratory, as eitprocessing's TIV with global timing) and its running mean.
  double max_tidal = -INFINITY;
  ++tidal_count_;
  for (uint32_t i : idx) {
    const double t = static_cast<double>(zm[i]) - static_cast<double>(z0[i]);
    out.tidal[i] = t;
    tidal_sum_[i] += t;
    max_tidal = std::max(max_tidal, t);
  }
  out.breaths_in_mean = tidal_count_;
  double max_mean = -INFINITY;
  for (uint32_t i : idx) {
    const double m = tidal_sum_[i] / static_cast<double>(tidal_count_);
    out.mean_tidal[i] = m;
    max_mean = std::max(max_mean, m);
  }
  // Lung space: compared in double, as eitprocessing compares its float64 mean.
  out.lung_pixels = 0;
  const double lung_cut = options_.lungspace_fraction * max_mean;
  for (uint32_t i : idx) {
    const bool in = tidal_sum_[i] / static_cast<double>(tidal_count_) >= lung_cut;
    out.lung_space[i] = in;
    out.lung_pixels += in;
  }
  sum_regions(layout_, out.tidal, 1.0, scratch_, out.region_tiv);

  // Centre of ventilation over the positive tidal values.
  double w = 0, wv = 0, wh = 0;
  for (uint32_t i : idx) {
    const double t = std::max(0.0, out.tidal[i]);
    w += t;
    wv += t * layout_.depth(i);
    wh += t * layout_.lateral(i);
  }
  out.cov_vertical = w > 0 ? 100.0 * wv / w : NAN;
  out.cov_horizontal = w > 0 ? 100.0 * wh / w : NAN;

  // Global inhomogeneity index over the lung space: Σ|DI − median| / Σ DI.
  size_t n = 0;
  double sum = 0;
  for (uint32_t i : idx)
    if (out.lung_space[i]) {
      scratch_[n++] = out.tidal[i];
      sum += out.tidal[i];
    }
  if (n > 0 && sum != 0) {
    const size_t mid = n / 2;
    std::nth_element(scratch_.begin(), scratch_.begin() + mid, scratch_.begin() + n);
    double median = scratch_[mid];
    if (n % 2 == 0)
      median = (median + *std::max_element(scratch_.begin(), scratch_.begin() + mid)) / 2;
    double dev = 0;
    for (uint32_t i : idx)
      if (out.lung_space[i]) dev += std::abs(out.tidal[i] - median);
    out.gi = dev / sum;
  } else {
    out.gi = NAN;
  }

  // Regional ventilation delay: when each lung-space pixel first reaches rvd_threshold of its
  // own inspiratory rise, as % of the global inspiration time (linear between frames).
  const double t_insp = static_cast<double>(b.middle - b.start);
  double rs = 0, rss = 0;
  out.rvd_pixels = 0;
  for (uint32_t i : idx) {
    out.rvd[i] = kNaN;
    if (!out.lung_space[i] || t_insp <= 0) continue;
    const double base = z0[i];
    double amp = 0;
    for (uint64_t f = b.start + 1; f <= b.middle; ++f)
      amp = std::max(amp, static_cast<double>(h.image(f)[i]) - base);
    if (!(amp > 0)) continue;
    const double level = options_.rvd_threshold * amp;
    double prev = 0;
    for (uint64_t f = b.start + 1; f <= b.middle; ++f) {
      const double d = static_cast<double>(h.image(f)[i]) - base;
      if (d >= level) {
        const double frac = d > prev ? (level - prev) / (d - prev) : 1.0;
        const double when = static_cast<double>(f - b.start - 1) + frac;
        const double r = 100.0 * when / t_insp;
        out.rvd[i] = static_cast<float>(r);
        rs += r;
        rss += r * r;
        ++out.rvd_pixels;
        break;
      }
      prev = d;
    }
  }
  if (out.rvd_pixels > 0) {
    const double m = rs / static_cast<double>(out.rvd_pixels);
    out.rvd_mean = m;
    out.rvd_sd = std::sqrt(std::max(0.0, rss / static_cast<double>(out.rvd_pixels) - m * m));
  } else {
    out.rvd_mean = out.rvd_sd = NAN;
  }

  // Silent spaces: lung-region pixels whose tidal variation stays under silent_fraction of the
  // breath's largest, split by the horizontal line through the centre of ventilation.
  size_t region = 0, dep = 0, nondep = 0;
  const double silent_cut = options_.silent_fraction * max_tidal;
  auto visit = [&](uint32_t i) {
    ++region;
    if (out.tidal[i] < silent_cut) {
      if (100.0 * layout_.depth(i) > out.cov_vertical)
        ++dep;
      else
        ++nondep;
    }
  };
  if (options_.lung_roi >= 0 && static_cast<size_t>(options_.lung_roi) < layout_.n_rois()) {
    for (uint32_t i : layout_.roi(static_cast<size_t>(options_.lung_roi))) visit(i);
  } else {
    for (uint32_t i : idx)
      if (out.lung_space[i]) visit(i);
  }
  out.silent_dependent =
      region ? 100.0 * static_cast<double>(dep) / static_cast<double>(region) : NAN;
  out.silent_nondependent =
      region ? 100.0 * static_cast<double>(nondep) / static_cast<double>(region) : NAN;
}

}  // namespace eit::indices
