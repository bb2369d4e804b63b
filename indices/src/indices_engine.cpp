#include "eit/indices/indices_engine.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "eit/indices/region_sums.hpp"

namespace eit::indices {
namespace {

size_t history_frames(const IndicesOptions& o) {
  // A breath is reported once the next one's peak is confirmed: up to its own length, the next
  // inspiration, a minimum duration and the invalid-data window after it started. Its start must
  // still be in the history then, for the pixel indices.
  const double s =
      o.history_s > 0 ? o.history_s : 2 * o.breath.max_breath_s + o.breath.invalid_window_s;
  return static_cast<size_t>(std::ceil((s + o.breath.minimum_duration_s) * o.rate_hz)) + 4;
}

}  // namespace

IndicesEngine::IndicesEngine(BodyLayout layout, IndicesOptions options)
    : layout_(std::make_unique<const BodyLayout>(std::move(layout))),
      options_(options),
      detector_(options.rate_hz, options.breath),
      history_(history_frames(options), layout_->n_out()),
      analyzer_(*layout_, options.rate_hz, options.per_breath),
      regions_(layout_->n_regions(), 0.0),
      cells_(4 * static_cast<size_t>(layout_->layers()), 0.0),
      result_(analyzer_.make_result()),
      gap_image_(layout_->n_out(), 0.0f),
      new_image_(layout_->n_out(), 0.0f) {
  if (options_.sign != 1.0 && options_.sign != -1.0)
    throw std::invalid_argument("indices: sign must be +1 or −1");
}

void IndicesEngine::keep(const std::optional<DetectedBreath>& b) noexcept {
  if (!b) return;
  if (found_count_ == found_.size()) return;  // cannot happen: a breath lasts many frames
  found_[found_count_++] = *b;
}

const BreathIndices* IndicesEngine::next_found() noexcept {
  if (found_count_ == 0) return nullptr;
  analyzer_.analyze(found_[0], history_, result_);
  for (size_t i = 1; i < found_count_; ++i) found_[i - 1] = found_[i];
  --found_count_;
  ++breaths_;
  return &result_;
}

void IndicesEngine::fill_gap(uint64_t missing, int64_t t_ns, double new_global) noexcept {
  const uint64_t last = history_.count() - 1;
  const double global = history_.global(last);
  const int64_t t0 = history_.time_ns(last);
  const auto most = static_cast<uint64_t>(std::ceil(kMaxGapFillS * options_.rate_hz));
  const uint64_t fill = std::min(missing, most);
  const bool interpolate =
      static_cast<double>(missing) <= kMaxInterpolatedGapS * options_.rate_hz &&
      std::isfinite(global) && std::isfinite(new_global);
  unfilled_frames_ += missing - fill;
  gap_frames_ += fill;
  const auto image = history_.image(last);
  std::copy(image.begin(), image.end(), gap_image_.begin());
  for (uint64_t k = 1; k <= fill; ++k) {
    const double frac = static_cast<double>(k) / static_cast<double>(missing + 1);
    // Only the last `capacity` frames of a long gap stay in the history: write just those.
    if (fill - k < history_.capacity()) {
      float* z = history_.next_image();
      if (interpolate) {
        const auto a = static_cast<float>(frac);
        for (size_t i = 0; i < gap_image_.size(); ++i)
          z[i] = (1 - a) * gap_image_[i] + a * new_image_[i];
      } else {
        std::copy(gap_image_.begin(), gap_image_.end(), z);
      }
    }
    const double g = interpolate ? global + frac * (new_global - global) : global;
    history_.commit(g, last_seq_ + k,
                    t0 + static_cast<int64_t>(frac * static_cast<double>(t_ns - t0)));
    keep(detector_.push(g, interpolate));
  }
}

const BreathIndices* IndicesEngine::push(std::span<const float> image, uint64_t seq, int64_t t_ns,
                                         bool valid) noexcept {
  const float s = static_cast<float>(options_.sign);
  for (size_t i = 0; i < image.size(); ++i) new_image_[i] = s * image[i];
  sum_regions(*layout_, new_image_, 1.0, cells_, regions_);
  if (history_.count() > 0 && seq > last_seq_ + 1)
    fill_gap(seq - last_seq_ - 1, t_ns, valid ? regions_[0] : NAN);
  last_seq_ = seq;
  std::copy(new_image_.begin(), new_image_.end(), history_.next_image());
  history_.commit(regions_[0], seq, t_ns);
  keep(detector_.push(regions_[0], valid && std::isfinite(regions_[0])));
  return next_found();
}

const BreathIndices* IndicesEngine::finish() noexcept {
  if (found_count_ == 0) keep(detector_.flush());
  return next_found();
}

}  // namespace eit::indices
