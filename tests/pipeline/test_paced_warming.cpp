// The idle reconstructor's cache warming at a slow rate: with frames 20 ms apart and a 1 ms warm
// interval it warms from about one interval before each frame is due, not every millisecond of
// the gap (that cost ~4 % of a core at 50 Hz: docs/benchmarks.md); at a fast rate, as before.
#include <doctest/doctest.h>

#include <atomic>

#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/paced_source.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "pipeline_test_support.hpp"

using namespace eit::pipeline;
using eit::test::CollectingSink;
using eit::test::random_frames;
using eit::test::random_model;
using eit::test::VectorSource;

namespace {

// The CPU backend, counting warm() calls.
class CountingWarm final : public Reconstructor {
 public:
  CountingWarm(const eit::recon::Model& m, std::atomic<uint64_t>& warms)
      : inner_(m, {4}), warms_(warms) {}
  std::string_view name() const noexcept override { return "counting"; }
  size_t n_meas() const noexcept override { return inner_.n_meas(); }
  size_t n_out() const noexcept override { return inner_.n_out(); }
  size_t max_batch() const noexcept override { return 4; }
  size_t max_in_flight() const noexcept override { return 1; }
  void set_reference(std::span<const double> v, bool n) override { inner_.set_reference(v, n); }
  bool submit(std::span<FrameSlot* const> batch) override { return inner_.submit(batch); }
  size_t complete(std::span<FrameSlot*> out, bool wait) override {
    return inner_.complete(out, wait);
  }
  size_t in_flight() const noexcept override { return inner_.in_flight(); }
  void warm() noexcept override {
    warms_.fetch_add(1, std::memory_order_relaxed);
    inner_.warm();
  }

 private:
  CpuReconstructor inner_;
  std::atomic<uint64_t>& warms_;
};

// Warm() calls while `frames` frames stream at `rate` Hz through the pipelined layout.
uint64_t warms_at(double rate, size_t frames) {
  const auto m = random_model(256);
  const auto data = random_frames(m, frames);
  VectorSource inner(data);
  PacedSource source(inner, {rate, 1});
  CollectingSink sink(m.n_out());
  std::atomic<uint64_t> warms{0};
  PipelineOptions o;
  o.stages = StageLayout::kPipelined;
  o.warm_interval_us = 1000;
  Pipeline p(m, source, std::make_unique<CountingWarm>(m, warms), {&sink}, o);
  p.start();
  REQUIRE(eit::test::wait_finished(p));
  REQUIRE(sink.frames().size() == frames);
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
