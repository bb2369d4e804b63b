// Publish stage: the last stage. Stamps kPublished, hands each frame to every sink in order,
// records the per-stage latencies of the frame, and returns the slot to the pool.
#include "eit/pipeline/backoff.hpp"
#include "eit/pipeline/clock.hpp"
#include "pipeline_state.hpp"

namespace eit::pipeline {
namespace {
constexpr int64_t kTickNs = 100'000'000;  // ImageSink::tick period
}

void run_publish_stage(Pipeline::State& s) noexcept {
  tune_stage_thread();
  for (ImageSink* sink : s.sinks) sink->begin();
  int64_t next_tick = now_ns() + kTickNs;
  Backoff idle(std::chrono::microseconds(s.options.max_idle_sleep_us));
  while (true) {
    FrameSlot* f = nullptr;
    if (s.out_queue.try_pop(f)) {
      idle.reset();
      const int64_t t0 = now_ns();
      f->stamp(Stage::kPublished, t0);
      for (ImageSink* sink : s.sinks) sink->publish(*f);
      const int64_t t1 = now_ns();
      for (size_t i = 0; i < kSpanCount; ++i) {
        const int64_t from = f->stamp(kLatencySpans[i].from), to = f->stamp(kLatencySpans[i].to);
        if (from && to) s.latency[i].record(to - from);
      }
      s.sink_latency.record(t1 - t0);
      if (f->flags & kFlagNonFinite) bump(s.non_finite);
      if (f->flags & kFlagReference) bump(s.reference_frames);
      bump(s.frames_out);
      s.pool.release(f);
      if (t1 >= next_tick) {
        for (ImageSink* sink : s.sinks) sink->tick(t1);
        next_tick = t1 + kTickNs;
      }
      continue;
    }
    if (s.recon_done.load(std::memory_order_acquire) && s.out_queue.empty_approx()) break;
    if (const int64_t t = now_ns(); t >= next_tick) {
      for (ImageSink* sink : s.sinks) sink->tick(t);
      next_tick = t + kTickNs;
    }
    idle.pause();
  }
  for (ImageSink* sink : s.sinks) sink->end();
  s.publish_done.store(true, std::memory_order_release);
}

}  // namespace eit::pipeline
