// The fan-out and the sink threads: each finished frame goes to every sink's own queue with one
// reference per queue that took it; each sink thread publishes from its queue and the thread that
// drops a slot's last reference hands the slot back to the source stage. Inline sinks
// (ImageSink::inline_safe()) are called by the fan-out itself, before the queues are fed.
#include <sched.h>

#include <algorithm>
#include <array>

#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/prefetch.hpp"
#include "pipeline_state.hpp"

namespace eit::pipeline {
namespace {

constexpr int64_t kTickNs = 100'000'000;  // ImageSink::tick period
constexpr int64_t kBlockedRecheckNs = 50'000'000;

// Pushes onto a blocking lane, waiting for room until it is taken or the pipeline aborts.
bool push_blocking(Pipeline::State& s, SinkLane& lane, const SinkItem& item) noexcept {
  bool pushed = false;
  while (!pushed && !s.aborted.load(std::memory_order_relaxed)) {
    s.wait(
        lane.room, now_ns() + kBlockedRecheckNs,
        [&] {
          pushed = lane.queue.try_push(item);
          return pushed || s.aborted.load(std::memory_order_relaxed);
        },
        s.layout == StageLayout::kRunToCompletion ? s.source_poll : s.reconstructor_poll);
  }
  return pushed;
}

// Stamps "published", calls the sink and records this sink's histograms: on the lane's thread,
// or on the fan-out's for an inline lane (either way one writer per lane).
void hand_to_sink(SinkLane& lane, const SinkItem& item) noexcept {
  // The sink gets its own copy of the slot's header: its drop count and its publish stamp. The
  // values and image stay in the shared slot (read only).
  FrameSlot local = *item.slot;
  local.dropped_before += item.dropped;
  const int64_t t0 = now_ns();
  local.stamp(Stage::kPublished, t0);
  lane.sink.publish(local);
  const int64_t t1 = now_ns();
  if (lane.sink.take_handoff()) sched_yield();  // its I/O thread sends now, not after the below
  for (size_t i = 0; i < kSpanCount; ++i) {
    const int64_t from = local.stamp(kLatencySpans[i].from), to = local.stamp(kLatencySpans[i].to);
    if (from && to) lane.latency[i].record(to - from);
  }
  lane.call.record(t1 - t0);
  bump(lane.delivered);
}

// Prefetches what the sink reads next while it works on the current image: the slot header
// two items ahead, the image one ahead (its header, fetched a round earlier, says where).
void prefetch_ahead(const SinkItem* burst, size_t i, size_t n, size_t image_bytes) noexcept {
  if (i + 2 < n) prefetch_for_read(burst[i + 2].slot, sizeof(FrameSlot));
  if (i + 1 < n) prefetch_for_read(burst[i + 1].slot->image, image_bytes);
}

// Drops this lane's reference to each slot of a burst; the slots no other sink holds go back to
// the source stage with one wake-up for the lot.
void release_burst(Pipeline::State& s, SinkLane& lane, const SinkItem* burst, size_t n) noexcept {
  bool freed = false;
  for (size_t i = 0; i < n; ++i) {
    FrameSlot* slot = burst[i].slot;
    if (s.refs[slot->index].fetch_sub(1, std::memory_order_acq_rel) == 1) {
      lane.returns.try_push(slot);  // sized for the whole pool: never full
      freed = true;
    }
  }
  if (freed) s.slot_freed.ring();
}

}  // namespace

void deliver(Pipeline::State& s, FrameSlot* f) noexcept {
  if (!f->stamp(Stage::kDone)) f->stamp(Stage::kDone, now_ns());
  if (f->flags & kFlagNonFinite) bump(s.non_finite);
  if (f->flags & kFlagReference) bump(s.reference_frames);
  bump(s.frames_out);
  const auto n = static_cast<uint32_t>(s.lanes.size());
  // One reference per sink plus the fan-out's own, so no lane can free the slot mid-loop.
  std::atomic<uint32_t>& refs = s.refs[f->index];
  refs.store(n + 1, std::memory_order_relaxed);
  uint32_t unused = 1;
  // Inline sinks first, on this thread: they cannot wait, so the lanes lose nothing by it, and
  // their consumers (another process reading a ring) see the frame without a thread wake-up.
  for (auto& lane_ptr : s.lanes) {
    if (!lane_ptr->runs_inline) continue;
    hand_to_sink(*lane_ptr, SinkItem{f, 0});  // never misses a frame: nothing to carry over
    lane_ptr->sink.flush();
    ++unused;  // the fan-out's own reference covered the call
  }
  for (auto& lane_ptr : s.lanes) {
    SinkLane& lane = *lane_ptr;
    if (lane.runs_inline) continue;
    const SinkItem item{f, lane.pending_drops};
    bool pushed = lane.queue.try_push(item);
    if (!pushed && lane.blocks) pushed = push_blocking(s, lane, item);
    if (pushed) {
      lane.pending_drops = 0;
      lane.work.ring();
    } else {
      // This sink misses the frame and whatever the frame would have reported before it.
      lane.pending_drops += f->dropped_before + 1;
      bump(lane.dropped);
      ++unused;
    }
  }
  if (refs.fetch_sub(unused, std::memory_order_acq_rel) == unused) s.recycle(f);
}

void begin_inline_sinks(Pipeline::State& s) noexcept {
  const int64_t t = now_ns();
  for (auto& lane : s.lanes) {
    if (!lane->runs_inline) continue;
    lane->sink.begin();
    lane->next_tick = t + kTickNs;
  }
}

int64_t tick_inline_sinks(Pipeline::State& s, int64_t now) noexcept {
  int64_t next = now + kTickNs;
  for (auto& lane : s.lanes) {
    if (!lane->runs_inline) continue;
    if (now >= lane->next_tick) {
      lane->sink.tick(now);
      lane->next_tick = now + kTickNs;
    }
    next = std::min(next, lane->next_tick);
  }
  return next;
}

void end_inline_sinks(Pipeline::State& s) noexcept {
  for (auto& lane : s.lanes) {
    if (!lane->runs_inline) continue;
    lane->sink.end();
    lane->done.store(true, std::memory_order_release);
  }
}

void run_sink_lane(Pipeline::State& s, SinkLane& lane) noexcept {
  const size_t image_bytes = s.pool.n_image() * sizeof(float);
  std::array<SinkItem, kLaneBurst> burst_items;
  SinkItem* burst = burst_items.data();
  lane.sink.begin();
  int64_t next_tick = now_ns() + kTickNs;
  while (true) {
    size_t n = 0;
    while (n < kLaneBurst && lane.queue.try_pop(burst[n])) ++n;
    if (n > 0) {
      lane.room.ring();  // once per burst: the fan-out may be waiting for room (kBlock)
      for (size_t i = 0; i < n; ++i) {
        prefetch_ahead(burst, i, n, image_bytes);
        hand_to_sink(lane, burst[i]);
      }
      release_burst(s, lane, burst, n);
    } else {
      lane.sink.flush();  // nothing else is waiting: what the sink gathered goes now
      if (s.recon_done.load(std::memory_order_acquire) && lane.queue.empty_approx()) break;
      // Yielding polls: the sink's helper threads may share this CPU (ZmqPublisher's I/O
      // thread does when placed on it), and the message just handed over waits for them.
      s.wait(
          lane.work, next_tick,
          [&] {
            return !lane.queue.empty_approx() || s.recon_done.load(std::memory_order_acquire);
          },
          PollStyle::kYield);
    }
    if (const int64_t t = now_ns(); t >= next_tick) {
      lane.sink.tick(t);
      next_tick = t + kTickNs;
    }
  }
  lane.sink.end();
  lane.done.store(true, std::memory_order_release);
}

}  // namespace eit::pipeline
