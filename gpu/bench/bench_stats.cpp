#include "bench_stats.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace eit::gpu::bench {

LatencyStats summarize(std::vector<int64_t> ns) {
  LatencyStats s;
  s.n = ns.size();
  if (ns.empty()) return s;
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) {
    const size_t i = std::min(ns.size() - 1, static_cast<size_t>(q * (ns.size() - 1) + 0.5));
    return ns[i] / 1e3;
  };
  s.p50_us = at(0.5);
  s.p99_us = at(0.99);
  s.p999_us = at(0.999);
  s.max_us = ns.back() / 1e3;
  s.mean_us = std::accumulate(ns.begin(), ns.end(), 0.0) / ns.size() / 1e3;
  return s;
}

std::string cells(const LatencyStats& s) {
  return fmt::format("{:.1f} | {:.1f} | {:.1f} | {:.1f}", s.p50_us, s.p99_us, s.p999_us, s.max_us);
}

}  // namespace eit::gpu::bench
