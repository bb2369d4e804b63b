// Source stage: reads frames from the Source into pool slots and pushes them to the
// reconstructor's queue. Lossless: waits for a slot and for room. Live: never waits; a frame
// that finds the queue full (or no free slot) is dropped and counted, and the next frame pushed
// carries the number dropped in dropped_before.
#include <chrono>
#include <exception>

#include <fmt/format.h>

#include "eit/pipeline/backoff.hpp"
#include "eit/pipeline/clock.hpp"
#include "pipeline_state.hpp"

namespace eit::pipeline {
namespace {

void reset_slot(FrameSlot& f) noexcept {
  f.seq = 0;
  f.device_time_ns = 0;
  f.stamp_ns.fill(0);
  f.flags = 0;
  f.dropped_before = 0;
}

FrameSlot* take_slot(Pipeline::State& s) noexcept {
  if (FrameSlot* f = s.pool.try_acquire()) return f;
  FrameSlot* f = nullptr;
  if (s.recycle_queue.try_pop(f)) return f;
  return nullptr;
}

}  // namespace

void run_source_stage(Pipeline::State& s) noexcept {
  tune_stage_thread();
  const bool live = s.options.policy == Policy::kLive;
  const auto timeout = std::chrono::milliseconds(s.options.read_timeout_ms);
  // Live mode reads into this spare slot when every other slot is in flight, and drops it.
  FrameSlot* spare = live ? take_slot(s) : nullptr;
  FrameSlot* slot = nullptr;
  uint64_t pending_drops = 0;
  uint64_t frames = 0;
  Backoff backoff;
  while (!s.stop_requested.load(std::memory_order_acquire)) {
    if (s.options.max_frames && frames >= s.options.max_frames) break;
    if (!slot) slot = take_slot(s);
    if (!slot && !live) {  // lossless: every slot is downstream; wait for one
      if (s.aborted.load(std::memory_order_relaxed)) break;
      backoff.pause();
      continue;
    }
    FrameSlot& target = slot ? *slot : *spare;
    reset_slot(target);
    ReadStatus status;
    try {
      status = s.source.read(target, timeout);
    } catch (const std::exception& e) {
      s.set_error(fmt::format("source '{}' failed: {}", s.source.describe(), e.what()));
      break;
    } catch (...) {
      s.set_error("source failed with an unknown exception");
      break;
    }
    if (status == ReadStatus::kTimeout) continue;
    if (status != ReadStatus::kFrame) break;
    ++frames;
    bump(s.frames_in);
    if (!slot) {  // live, no free slot: the frame read into the spare is dropped
      ++pending_drops;
      bump(s.input_dropped);
      continue;
    }
    const int64_t t = now_ns();
    if (!target.stamp(Stage::kReceived)) target.stamp(Stage::kReceived, t);
    if (!target.stamp(Stage::kScheduled))
      target.stamp(Stage::kScheduled, target.stamp(Stage::kReceived));
    target.dropped_before = static_cast<uint32_t>(pending_drops);
    target.stamp(Stage::kEnqueued, now_ns());
    bool pushed = s.in_queue.try_push(slot);
    if (!pushed && !live) {
      backoff.reset();
      while (!pushed && !s.aborted.load(std::memory_order_relaxed)) {
        backoff.pause();
        target.stamp(Stage::kEnqueued, now_ns());
        pushed = s.in_queue.try_push(slot);
      }
    }
    backoff.reset();
    if (pushed) {
      slot = nullptr;
      pending_drops = 0;
    } else {  // dropped: keep the slot for the next read
      ++pending_drops;
      bump(s.input_dropped);
    }
  }
  // A slot still held here (or the spare) simply stays out of the pool until it is destroyed.
  s.source_done.store(true, std::memory_order_release);
}

}  // namespace eit::pipeline
