#include "eit/pipeline/latency_histogram.hpp"

#include <algorithm>
#include <cmath>

namespace eit::pipeline {
namespace {
constexpr int kSub = LatencyHistogram::kSubBits;
constexpr uint64_t kSubCount = uint64_t{1} << kSub;
}  // namespace

int64_t LatencyHistogram::bucket_low(size_t bucket) noexcept {
  const size_t group = bucket >> kSub, sub = bucket & (kSubCount - 1);
  if (group == 0) return static_cast<int64_t>(sub);
  return static_cast<int64_t>((kSubCount + sub) << (group - 1));
}

int64_t LatencyHistogram::bucket_high(size_t bucket) noexcept {
  const size_t group = bucket >> kSub;
  const int64_t width = group == 0 ? 1 : int64_t{1} << (group - 1);
  return bucket_low(bucket) + width - 1;
}

HistogramSnapshot LatencyHistogram::snapshot() const noexcept {
  HistogramSnapshot s;
  uint64_t total = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    s.counts_[i] = counts_[i].load(std::memory_order_relaxed);
    total += s.counts_[i];
  }
  // The bucket total is what percentiles are computed from; use it as the count.
  s.count_ = total;
  s.sum_ = sum_.load(std::memory_order_relaxed);
  s.min_ = total ? min_.load(std::memory_order_relaxed) : 0;
  s.max_ = max_.load(std::memory_order_relaxed);
  return s;
}

int64_t HistogramSnapshot::percentile(double q) const noexcept {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  // Rank of the q-quantile, 1-based: the smallest value with at least ceil(q·n) values ≤ it.
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * count_)));
  uint64_t seen = 0;
  for (size_t i = 0; i < LatencyHistogram::kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const int64_t low = LatencyHistogram::bucket_low(i);
      const int64_t mid = low + (LatencyHistogram::bucket_high(i) - low) / 2;
      return std::clamp(mid, min_, std::max(min_, max_));
    }
  }
  return max_;
}

LatencySummary HistogramSnapshot::summary() const noexcept {
  LatencySummary s;
  s.count = count_;
  if (count_ == 0) return s;
  s.min_ns = min_;
  s.p50_ns = percentile(0.50);
  s.p90_ns = percentile(0.90);
  s.p99_ns = percentile(0.99);
  s.p999_ns = percentile(0.999);
  s.max_ns = max_;
  s.mean_ns = static_cast<double>(sum_) / static_cast<double>(count_);
  return s;
}

HistogramSnapshot HistogramSnapshot::since(const HistogramSnapshot& earlier) const noexcept {
  HistogramSnapshot d;
  size_t first = LatencyHistogram::kBuckets, last = 0;
  for (size_t i = 0; i < LatencyHistogram::kBuckets; ++i) {
    d.counts_[i] = counts_[i] >= earlier.counts_[i] ? counts_[i] - earlier.counts_[i] : 0;
    d.count_ += d.counts_[i];
    if (d.counts_[i]) {
      first = std::min(first, i);
      last = i;
    }
  }
  d.sum_ = sum_ >= earlier.sum_ ? sum_ - earlier.sum_ : 0;
  if (d.count_) {
    d.min_ = std::max(min_, LatencyHistogram::bucket_low(first));
    d.max_ = std::min(max_, LatencyHistogram::bucket_high(last));
  }
  return d;
}

}  // namespace eit::pipeline
