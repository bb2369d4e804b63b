#pragma once
// The benchmark's picture, drawn by our own code into one self-contained SVG file: per run, the
// latency CDF of every stage interval and of end to end (log-scaled latency axis, percentile axis
// stretched toward the tail: 0, 90, 99, 99.9 … %), and end-to-end latency over the run's time
// (min, median and max per time bucket, so no outlier is hidden by decimation).
// Runs on the calling thread after the runs; throws std::runtime_error naming the file.
#include <string>

#include "eit/bench/bench_report.hpp"

namespace eit::bench {

std::string render_latency_svg(const BenchReport& report);
void write_latency_svg(const BenchReport& report, const std::string& path);

// Axis helpers, exposed for tests: "850 ns", "12 µs", "3.2 ms", "1.5 s".
std::string format_duration(double ns);

}  // namespace eit::bench
