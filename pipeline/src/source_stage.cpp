// Source stage: reads frames from the Source into pool slots and pushes them to the
// reconstructor's queue, or (run to completion) reconstructs and fans each out itself.
// Lossless: waits for a slot and for room. Live: never waits; a frame that finds the queue full
// (or no free slot) is dropped and counted, and the next frame pushed carries the number dropped
// in dropped_before.
#include <chrono>
#include <exception>

#include <fmt/format.h>

#include "eit/pipeline/clock.hpp"
#include "pipeline_state.hpp"
#include "reconstruct_stage.hpp"

namespace eit::pipeline {
namespace {

constexpr int64_t kRecheckNs = 50'000'000;

void reset_slot(FrameSlot& f) noexcept {
  f.seq = 0;
  f.device_time_ns = 0;
  f.stamp_ns.fill(0);
  f.flags = 0;
  f.dropped_before = 0;
}

class SourceStage {
 public:
  explicit SourceStage(Pipeline::State& s)
      : s_(s), live_(s.options.policy == Policy::kLive), timeout_(s.options.read_timeout_ms) {}

  // Reads frames until the source ends, stops or fails, or max_frames; `forward` takes each frame
  // read into a slot of its own (the spare slot's frames are dropped here); `after_read` runs
  // after every read, frame or timeout (run to completion: the inline sinks' ticks).
  template <typename Forward, typename AfterRead>
  void run(Forward&& forward, AfterRead&& after_read) noexcept;

  // Pushes onto the reconstructor's queue (threaded layout); false when the frame was dropped.
  bool push(FrameSlot* f) noexcept;

 private:
  // A free slot: the one freed last (at a paced rate the previous frame's, whose values and
  // image are still in cache), else one never used yet.
  FrameSlot* take_slot() noexcept {
    gather_freed();
    auto& freed = s_.freed_slots;
    if (freed.empty()) return s_.pool.try_acquire();
    FrameSlot* f = freed.back();
    freed.pop_back();
    return f;
  }
  // Moves the slots freed by the reconstructor and the sinks onto freed_slots, in the order each
  // gave them back (it holds the whole pool: never reallocates).
  void gather_freed() noexcept {
    FrameSlot* f = nullptr;
    while (s_.recycle_queue.try_pop(f)) s_.freed_slots.push_back(f);
    for (auto& lane : s_.lanes)
      while (lane->returns.try_pop(f)) s_.freed_slots.push_back(f);
  }
  bool stopping() const noexcept {
    return s_.aborted.load(std::memory_order_relaxed) ||
           s_.stop_requested.load(std::memory_order_relaxed);
  }

  Pipeline::State& s_;
  const bool live_;
  const std::chrono::milliseconds timeout_;
  uint64_t pending_drops_ = 0;
};

template <typename Forward, typename AfterRead>
void SourceStage::run(Forward&& forward, AfterRead&& after_read) noexcept {
  // Live mode reads into this spare slot when every other slot is in flight, and drops it.
  FrameSlot* spare = live_ ? take_slot() : nullptr;
  FrameSlot* slot = nullptr;
  uint64_t frames = 0;
  while (!s_.stop_requested.load(std::memory_order_acquire)) {
    if (s_.options.max_frames && frames >= s_.options.max_frames) break;
    if (!slot) slot = take_slot();
    if (!slot && !live_) {  // lossless: every slot is downstream; wait for one
      if (s_.aborted.load(std::memory_order_relaxed)) break;
      s_.wait(
          s_.slot_freed, now_ns() + kRecheckNs,
          [&] {
            slot = take_slot();
            return slot != nullptr || stopping();
          },
          s_.source_poll);
      continue;
    }
    FrameSlot& target = slot ? *slot : *spare;
    reset_slot(target);
    ReadStatus status;
    try {
      status = s_.source.read(target, timeout_);
    } catch (const std::exception& e) {
      s_.set_error(fmt::format("source '{}' failed: {}", s_.source.describe(), e.what()));
      break;
    } catch (...) {
      s_.set_error("source failed with an unknown exception");
      break;
    }
    after_read();
    if (status == ReadStatus::kTimeout) continue;
    if (status != ReadStatus::kFrame) break;
    ++frames;
    bump(s_.frames_in);
    if (!slot) {  // live, no free slot: the frame read into the spare is dropped
      ++pending_drops_;
      bump(s_.input_dropped);
      continue;
    }
    const int64_t t = now_ns();
    if (!target.stamp(Stage::kReceived)) target.stamp(Stage::kReceived, t);
    if (!target.stamp(Stage::kScheduled))
      target.stamp(Stage::kScheduled, target.stamp(Stage::kReceived));
    // Added to what the source reported (a replayed recording's own drops before this frame).
    target.dropped_before = static_cast<uint32_t>(target.dropped_before + pending_drops_);
    target.stamp(Stage::kEnqueued, t);
    if (forward(slot)) {
      slot = nullptr;
      pending_drops_ = 0;
    } else {  // dropped: keep the slot for the next read
      ++pending_drops_;
      bump(s_.input_dropped);
    }
  }
  // A slot still held here (or the spare) simply stays out of the pool until it is destroyed.
}

bool SourceStage::push(FrameSlot* f) noexcept {
  bool pushed = s_.in_queue.try_push(f);
  if (!pushed && !live_) {
    while (!pushed && !s_.aborted.load(std::memory_order_relaxed)) {
      s_.wait(
          s_.in_room, now_ns() + kRecheckNs,
          [&] {
            // Stamped before each attempt: once pushed, the slot belongs to the consumer.
            f->stamp(Stage::kEnqueued, now_ns());
            pushed = s_.in_queue.try_push(f);
            return pushed || s_.aborted.load(std::memory_order_relaxed);
          },
          s_.source_poll);
    }
  }
  if (pushed) s_.in_work.ring();
  return pushed;
}

}  // namespace

void run_source_stage(Pipeline::State& s) noexcept {
  tune_stage_thread(s, 0, "eit-source");
  SourceStage stage(s);
  stage.run([&](FrameSlot* f) { return stage.push(f); }, [] {});
  s.source_done.store(true, std::memory_order_release);
  s.in_work.ring();
}

void run_inline_stage(Pipeline::State& s) noexcept {
  tune_stage_thread(s, 0, "eit-stream");
  begin_inline_sinks(s);
  {
    SourceStage source(s);
    ReconstructStage recon(s);
    int64_t next_tick = 0;
    source.run(
        [&](FrameSlot* f) {
          recon.run_one(f);
          return true;
        },
        [&] {
          if (const int64_t t = now_ns(); t >= next_tick) next_tick = tick_inline_sinks(s, t);
        });
    recon.finish();
  }
  end_inline_sinks(s);
  s.source_done.store(true, std::memory_order_release);
  s.recon_done.store(true, std::memory_order_release);
  s.ring_all();
}

}  // namespace eit::pipeline
