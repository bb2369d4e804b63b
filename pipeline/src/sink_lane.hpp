#pragma once
// SinkLane: one sink's bounded queue, thread, doorbells and counters (private to pipeline/src).
// The fan-out (reconstructor thread) is the queue's only producer; the lane's thread its only
// consumer, and the only producer of `returns`, whose consumer is the source stage.
#include <array>
#include <atomic>
#include <cstdint>
#include <thread>

#include "eit/pipeline/doorbell.hpp"
#include "eit/pipeline/frame.hpp"
#include "eit/pipeline/image_sink.hpp"
#include "eit/pipeline/latency_histogram.hpp"
#include "eit/pipeline/pipeline_stats.hpp"
#include "eit/pipeline/spsc_queue.hpp"

namespace eit::pipeline {

// Most items a sink thread takes off its queue at once (sink_fanout.cpp). A burst costs one
// wake-up of the fan-out (room) and of the source stage (slot_freed) instead of one per image:
// each wake-up is a full fence, which after a sink's image copy waits for every store of it. At
// 1 kHz a burst is one image, and taking a burst off the queue costs nanoseconds, not a wait. A
// sink thread holds up to this many slots besides its full queue: the pool counts them.
inline constexpr size_t kLaneBurst = 32;

// A queue entry: the shared slot and the frames this sink alone missed just before it.
struct SinkItem {
  FrameSlot* slot = nullptr;
  uint32_t dropped = 0;
};

struct SinkLane {
  SinkLane(ImageSink& s, size_t capacity, size_t pool_slots, bool blocking)
      : sink(s),
        runs_inline(s.inline_safe()),
        blocks(blocking && !runs_inline),
        queue(capacity),
        returns(pool_slots) {}

  ImageSink& sink;
  // inline_safe() sink: published by the fan-out itself on the producing thread; the lane then
  // has no thread and its queues stay empty (image_sink.hpp, "Inline sinks").
  const bool runs_inline;
  const bool blocks;          // wait for room (kBlock or a lossless pipeline) instead of dropping
  SpscQueue<SinkItem> queue;  // fan-out → lane thread
  SpscQueue<FrameSlot*> returns;  // lane thread → source stage: slots this lane released last
  Doorbell work;                  // rung by the fan-out after a push (and at shutdown)
  Doorbell room;                  // rung by the lane thread after a pop (kBlock fan-out waits)
  std::thread thread;

  // Fan-out side (single writer: the thread that runs deliver()).
  uint32_t pending_drops = 0;
  int64_t next_tick = 0;  // inline lanes: when the fan-out thread calls tick() next
  alignas(kCacheLine) std::atomic<uint64_t> dropped{0};
  // Lane thread side (the fan-out thread's, for an inline lane).
  alignas(kCacheLine) std::atomic<uint64_t> delivered{0};
  std::array<LatencyHistogram, kSpanCount> latency;
  LatencyHistogram call;
  std::atomic<bool> done{false};
};

}  // namespace eit::pipeline
