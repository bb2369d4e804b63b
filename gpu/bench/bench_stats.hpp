#pragma once
// Latency statistics for bench_cuda: percentiles over nanosecond samples, formatted in µs.
#include <cstdint>
#include <string>
#include <vector>

namespace eit::gpu::bench {

struct LatencyStats {
  double p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0, mean_us = 0;
  size_t n = 0;
};

LatencyStats summarize(std::vector<int64_t> samples_ns);
// "p50 10.4 | p99 11.0 | p99.9 20.1 | max 35.2" as markdown table cells.
std::string cells(const LatencyStats& s);

}  // namespace eit::gpu::bench
