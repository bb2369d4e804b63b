// The idle reconstructor's cache warming at a slow rate: with frames 20 ms apart and a 1 ms warm
// interval it warms from about one interval before each frame is due, not every millisecond of
// the gap (that cost ~4 % of a core at 50 Hz: docs/benchmarks.md); at a fast rate, as before.
#include <doctest/doctest.h>

#include <atomic>

#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "pipeline_test_support.hpp"

using namespace eit::pipeline;
using eit::test::random_model;

namespace {

// The CPU backend, counting warm() calls.
class CountingWarm final : public eit::test::ForwardingCpuBackend {
 public:
  CountingWarm(const eit::recon::Model& m, std::atomic<uint64_t>& warms)
      : ForwardingCpuBackend(m, "counting"), warms_(warms) {}
  void warm() noexcept override {
    warms_.fetch_add(1, std::memory_order_relaxed);
    inner().warm();
  }

 private:
  std::atomic<uint64_t>& warms_;
};

// Warm() calls while `frames` frames stream at `rate` Hz through the pipelined layout.
uint64_t warms_at(double rate, size_t frames) {
  const auto m = random_model(256);
  std::atomic<uint64_t> warms{0};
  PipelineOptions o;
  o.stages = StageLayout::kPipelined;
  o.warm_interval_us = 1000;
  eit::test::run_paced(m, frames, rate, std::make_unique<CountingWarm>(m, warms), o);
  return warms.load();
}

}  // namespace

TEST_CASE("at 50 Hz the idle reconstructor warms about once per frame, not every millisecond") {
  const size_t frames = 40;  // 0.8 s: warming every 1 ms all through would be ~800 calls
  const uint64_t w = warms_at(50, frames);
  MESSAGE("warm() calls for " << frames << " frames at 50 Hz: " << w);
  CHECK(w >= 1);           // it still warms before frames
  CHECK(w <= 8 * frames);  // a few per 20 ms gap (every 1 ms all through: ~17)
}
