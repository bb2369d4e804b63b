#pragma once
// Order statistics of a set of latencies (ns): min, p50, p90, p99, p99.9, max and the mean, with
// how many samples each percentile rests on, and which percentiles the sample count supports.
//
// Percentiles are nearest-rank (the value of the ⌈p·n⌉-th smallest sample): always a latency that
// was actually observed, never an interpolation. A percentile p is *quoted* only when at least
// one sample lies beyond it, i.e. n·(1 − p) ≥ 1: p99 needs ≥ 100 samples, p99.9 ≥ 1000. Below
// that the value is still computed (it is the maximum, or close to it) but marked unquoted, and
// every report prints "—" instead of a number that would pretend to describe a tail it never saw.
//
// Plain functions of their input; no threads, no state.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace eit::bench {

struct PercentileValue {
  double p = 0;            // 0.5, 0.9, 0.99, 0.999
  std::string_view label;  // "p50", "p90", "p99", "p99.9"
  int64_t value_ns = 0;    // nearest-rank value (0 when n == 0)
  size_t rank = 0;         // 1-based rank of value_ns among the sorted samples
  size_t beyond = 0;       // samples ranked above it: n − rank, what the tail estimate rests on
  size_t needed = 0;       // samples needed before it is quoted: ⌈1 / (1 − p)⌉
  bool quoted = false;     // n ≥ needed
};

struct LatencySummary {
  size_t n = 0;
  int64_t min_ns = 0, max_ns = 0;
  double mean_ns = 0;
  std::array<PercentileValue, 4> percentiles{};  // p50, p90, p99, p99.9

  const PercentileValue* find(std::string_view label) const noexcept;
};

// The percentiles every summary reports, in order.
inline constexpr std::array<double, 4> kReportedPercentiles{0.5, 0.9, 0.99, 0.999};

// Summarises `sorted` (ascending; checked in debug builds only).
LatencySummary summarize_sorted(std::span<const int64_t> sorted);
// Sorts `samples` in place, then summarises them.
LatencySummary summarize(std::vector<int64_t>& samples);

// Nearest-rank percentile of ascending `sorted` (p in [0, 1]); 0 for an empty span.
int64_t nearest_rank(std::span<const int64_t> sorted, double p) noexcept;

}  // namespace eit::bench
