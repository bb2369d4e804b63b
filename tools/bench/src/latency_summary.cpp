#include "eit/bench/latency_summary.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace eit::bench {
namespace {

constexpr std::array<std::string_view, 4> kLabels{"p50", "p90", "p99", "p99.9"};

// ⌈p·n⌉ without floating-point surprises at exact multiples (0.99 · 1000 = 989.9999…).
size_t rank_of(double p, size_t n) noexcept {
  if (n == 0) return 0;
  const double exact = p * static_cast<double>(n);
  auto r = static_cast<size_t>(std::ceil(exact - 1e-9 * std::max(1.0, exact)));
  return std::clamp<size_t>(r, 1, n);
}

size_t samples_needed(double p) noexcept {
  return static_cast<size_t>(std::ceil(1.0 / (1.0 - p) - 1e-9));
}

}  // namespace

const PercentileValue* LatencySummary::find(std::string_view label) const noexcept {
  for (const auto& pv : percentiles)
    if (pv.label == label) return &pv;
  return nullptr;
}

int64_t nearest_rank(std::span<const int64_t> sorted, double p) noexcept {
  if (sorted.empty()) return 0;
  return sorted[rank_of(p, sorted.size()) - 1];
}

LatencySummary summarize_sorted(std::span<const int64_t> sorted) {
  assert(std::is_sorted(sorted.begin(), sorted.end()));
  LatencySummary s;
  s.n = sorted.size();
  for (size_t i = 0; i < kReportedPercentiles.size(); ++i) {
    auto& pv = s.percentiles[i];
    pv.p = kReportedPercentiles[i];
    pv.label = kLabels[i];
    pv.needed = samples_needed(pv.p);
  }
  if (sorted.empty()) return s;
  s.min_ns = sorted.front();
  s.max_ns = sorted.back();
  long double sum = 0;
  for (int64_t v : sorted) sum += v;
  s.mean_ns = static_cast<double>(sum / static_cast<long double>(s.n));
  for (auto& pv : s.percentiles) {
    pv.rank = rank_of(pv.p, s.n);
    pv.value_ns = sorted[pv.rank - 1];
    pv.beyond = s.n - pv.rank;
    pv.quoted = s.n >= pv.needed;
  }
  return s;
}

LatencySummary summarize(std::vector<int64_t>& samples) {
  std::sort(samples.begin(), samples.end());
  return summarize_sorted(samples);
}

}  // namespace eit::bench
