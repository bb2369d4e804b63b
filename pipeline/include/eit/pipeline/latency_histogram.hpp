#pragma once
// LatencyHistogram: fixed-memory log-linear histogram of durations in nanoseconds (HDR-style:
// 32 linear sub-buckets per power of two, so a reported percentile is within 3.2% of the true
// value; values up to 2^40 ns ≈ 18 min, larger ones land in the last bucket, max stays exact).
//
// Threads: exactly one thread records (the publish stage); any thread may take a snapshot at any
// time without locks. Counters are relaxed atomics written by their single owner, so a snapshot
// taken mid-record may miss the frame being recorded, never tear a counter. record() never
// allocates, locks or blocks.
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace eit::pipeline {

struct LatencySummary {
  uint64_t count = 0;
  int64_t min_ns = 0, p50_ns = 0, p90_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;
  double mean_ns = 0;
};

class HistogramSnapshot;

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 5;
  static constexpr int kMaxBits = 40;
  static constexpr size_t kBuckets = size_t{kMaxBits - kSubBits + 1} << kSubBits;

  // Single writer. Negative durations (clock misuse) are recorded as 0. Inline: the fan-out
  // records kSpanCount + 1 of these per frame and sink.
  void record(int64_t ns) noexcept {
    if (ns < 0) ns = 0;
    bump(counts_[bucket_of(ns)]);
    bump(sum_, static_cast<uint64_t>(ns));
    if (ns < min_.load(std::memory_order_relaxed)) min_.store(ns, std::memory_order_relaxed);
    if (ns > max_.load(std::memory_order_relaxed)) max_.store(ns, std::memory_order_relaxed);
    bump(count_);  // last, so a snapshot's count never exceeds its buckets' total by much
  }
  HistogramSnapshot snapshot() const noexcept;

  static size_t bucket_of(int64_t ns) noexcept {
    constexpr uint64_t kSubCount = uint64_t{1} << kSubBits;
    const uint64_t v = ns < 0 ? 0 : static_cast<uint64_t>(ns);
    if (v < kSubCount) return static_cast<size_t>(v);
    const int msb = 63 - std::countl_zero(v);
    if (msb >= kMaxBits) return kBuckets - 1;
    const int shift = msb - kSubBits;
    return (static_cast<size_t>(shift + 1) << kSubBits) +
           static_cast<size_t>((v >> shift) - kSubCount);
  }
  static int64_t bucket_low(size_t bucket) noexcept;   // smallest value in the bucket
  static int64_t bucket_high(size_t bucket) noexcept;  // largest value in the bucket

 private:
  static void bump(std::atomic<uint64_t>& c, uint64_t by = 1) noexcept {
    c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
  std::array<std::atomic<uint64_t>, kBuckets> counts_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_{0};
  std::atomic<int64_t> min_{INT64_MAX};
  std::atomic<int64_t> max_{0};
};

// A plain copy of a histogram's counters: percentiles, and the difference of two snapshots (the
// frames recorded between them, e.g. the last status-line interval; its min/max are bucket bounds).
class HistogramSnapshot {
 public:
  uint64_t count() const noexcept { return count_; }
  // q in [0, 1]; the midpoint of the bucket holding the q-quantile, clamped to [min, max].
  int64_t percentile(double q) const noexcept;
  LatencySummary summary() const noexcept;
  HistogramSnapshot since(const HistogramSnapshot& earlier) const noexcept;
  uint64_t bucket_count(size_t bucket) const noexcept { return counts_[bucket]; }

 private:
  friend class LatencyHistogram;
  std::array<uint64_t, LatencyHistogram::kBuckets> counts_{};
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  int64_t min_ = 0, max_ = 0;
};

}  // namespace eit::pipeline
