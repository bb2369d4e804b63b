#include "eit/indices/indices_engine.hpp"

#include <cmath>
#include <stdexcept>

#include "eit/indices/region_sums.hpp"

namespace eit::indices {
namespace {

size_t history_frames(const IndicesOptions& o) {
  const double s = o.history_s > 0 ? o.history_s : o.breath.max_breath_s;
  // A breath is analysed up to a breath and a minimum duration after it started.
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
      result_(analyzer_.make_result()) {
  if (options_.sign != 1.0 && options_.sign != -1.0)
    throw std::invalid_argument("indices: sign must be +1 or −1");
}

const BreathIndices* IndicesEngine::push(std::span<const float> image, uint64_t seq, int64_t t_ns,
                                         bool valid) noexcept {
  float* z = history_.next_image();
  const float s = static_cast<float>(options_.sign);
  for (size_t i = 0; i < image.size(); ++i) z[i] = s * image[i];
  sum_regions(*layout_, {z, image.size()}, 1.0, cells_, regions_);
  history_.commit(regions_[0], seq, t_ns);
  const auto breath = detector_.push(regions_[0], valid && std::isfinite(regions_[0]));
  if (!breath) return nullptr;
  analyzer_.analyze(*breath, history_, result_);
  ++breaths_;
  return &result_;
}

const BreathIndices* IndicesEngine::finish() noexcept {
  const auto breath = detector_.flush();
  if (!breath) return nullptr;
  analyzer_.analyze(*breath, history_, result_);
  ++breaths_;
  return &result_;
}

}  // namespace eit::indices
