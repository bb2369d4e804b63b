#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "eit/pipeline/latency_histogram.hpp"

using eit::pipeline::HistogramSnapshot;
using eit::pipeline::LatencyHistogram;

TEST_CASE("histogram buckets tile the value range without gaps or overlaps") {
  for (size_t b = 0; b + 1 < LatencyHistogram::kBuckets; ++b) {
    REQUIRE(LatencyHistogram::bucket_high(b) + 1 == LatencyHistogram::bucket_low(b + 1));
    REQUIRE(LatencyHistogram::bucket_of(LatencyHistogram::bucket_low(b)) == b);
    REQUIRE(LatencyHistogram::bucket_of(LatencyHistogram::bucket_high(b)) == b);
  }
  CHECK(LatencyHistogram::bucket_of(-5) == 0);
  CHECK(LatencyHistogram::bucket_of(int64_t{1} << 50) == LatencyHistogram::kBuckets - 1);
}

TEST_CASE("histogram percentiles are within 3.2% of exact order statistics") {
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> dist(9.0, 1.0);  // ~8 µs median, long tail
  std::vector<int64_t> values(100000);
  LatencyHistogram h;
  for (auto& v : values) {
    v = static_cast<int64_t>(dist(rng));
    h.record(v);
  }
  std::sort(values.begin(), values.end());
  const HistogramSnapshot s = h.snapshot();
  CHECK(s.count() == values.size());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    CAPTURE(q);
    const auto rank = static_cast<size_t>(std::ceil(q * values.size())) - 1;
    const double exact = static_cast<double>(values[rank]);
    CHECK(std::abs(static_cast<double>(s.percentile(q)) - exact) <= 0.032 * exact + 1);
  }
  const auto sum = s.summary();
  CHECK(sum.max_ns == values.back());
  CHECK(sum.min_ns == values.front());
}

TEST_CASE("histogram difference of two snapshots holds only the values recorded in between") {
  LatencyHistogram h;
  for (int i = 0; i < 1000; ++i) h.record(1'000);
  const auto before = h.snapshot();
  for (int i = 0; i < 10; ++i) h.record(1'000'000);
  const auto window = h.snapshot().since(before);
  CHECK(window.count() == 10);
  CHECK(std::abs(window.percentile(0.5) - 1'000'000) < 32'000);
}

TEST_CASE("histogram can be read by another thread while one thread records") {
  LatencyHistogram h;
  constexpr int kValues = 2'000'000;
  std::thread writer([&] {
    for (int i = 0; i < kValues; ++i) h.record(i % 5000);
  });
  uint64_t last = 0;
  bool monotonic = true;
  while (last < kValues) {
    const uint64_t c = h.snapshot().count();
    monotonic &= c >= last;
    last = c;
  }
  writer.join();
  CHECK(monotonic);
  CHECK(h.snapshot().count() == kValues);
}
