#pragma once
// PipelineStats: one consistent-enough snapshot of a running pipeline's counters, taken by
// Pipeline::stats() from any thread without stopping the stages (each counter is read atomically;
// counters of different stages may be a frame apart).
//
// Latency spans: each is the time between two stamps of a frame (frame.hpp Stage), recorded by
// each sink's thread for every frame it delivered ("published": its thread handed the frame to
// the sink); PipelineStats::latency is the first sink's view. "dequeued→done" is the per-frame
// reconstruction path; "received→published" is the whole pipeline; "scheduled→published" adds the
// source's own lateness.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "eit/pipeline/frame.hpp"
#include "eit/pipeline/image_sink.hpp"
#include "eit/pipeline/latency_histogram.hpp"
#include "eit/pipeline/source.hpp"

namespace eit::pipeline {

struct LatencySpan {
  Stage from, to;
  std::string_view name;
};

inline constexpr std::array<LatencySpan, 8> kLatencySpans{{
    {Stage::kReceived, Stage::kPublished, "received→published"},
    {Stage::kScheduled, Stage::kPublished, "scheduled→published"},
    {Stage::kDequeued, Stage::kDone, "dequeued→done"},
    {Stage::kReceived, Stage::kEnqueued, "received→enqueued"},
    {Stage::kEnqueued, Stage::kDequeued, "enqueued→dequeued"},
    {Stage::kDequeued, Stage::kSubmitted, "dequeued→submitted"},
    {Stage::kSubmitted, Stage::kDone, "submitted→done"},
    {Stage::kDone, Stage::kPublished, "done→published"},
}};
inline constexpr size_t kSpanCount = kLatencySpans.size();
// Indices into PipelineStats::latency for the spans most readers want.
inline constexpr size_t kSpanTotal = 0, kSpanScheduledTotal = 1, kSpanReconstruct = 2;

struct QueueStats {
  size_t capacity = 0;
  size_t depth = 0;       // approximate, at snapshot time
  size_t high_water = 0;  // deepest seen
  uint64_t dropped = 0;   // frames dropped in front of this queue (live policy)
};

// One sink's own queue (Pipeline's fan-out → the sink's thread) and what went through it.
struct SinkQueueStats {
  std::string name;        // ImageSink::name()
  bool blocks = false;     // the queue waits when full (kBlock, or a lossless pipeline)
  bool runs_inline = false;  // inline_safe(): published on the producing thread, no queue
  QueueStats queue;        // dropped: frames this sink alone missed because its queue was full
  uint64_t delivered = 0;  // frames handed to the sink's publish()
  LatencySummary latency;  // received→published for this sink
  LatencySummary call;     // time inside this sink's publish()
};

// A stage thread pinned by PipelineOptions::cpus: which thread, the CPU it asked for, and 0 when
// pinned or the error number pthread_setaffinity_np returned (EINVAL: a CPU outside the allowed
// set, as in a container's cpuset).
struct StageThreadCpu {
  std::string thread;  // "source", "reconstructor", "sink 0", …
  int cpu = -1;
  int error = 0;
};

struct PipelineStats {
  int64_t now_ns = 0, started_ns = 0;  // clock.hpp now_ns()
  bool running = false;                // some stage is still running
  std::string backend;                 // the backend now in use ("cpu", "cuda", …)
  uint64_t frames_in = 0;              // frames the source delivered
  uint64_t frames_reconstructed = 0;   // frames out of the backend
  uint64_t frames_out = 0;             // frames handed to the sinks' queues (the fan-out)
  uint64_t non_finite = 0;             // delivered frames flagged kFlagNonFinite
  uint64_t reference_frames = 0;       // delivered frames flagged kFlagReference
  uint64_t reference_captures = 0;     // references captured from the stream
  uint64_t backend_faults = 0;         // BackendErrors caught
  uint64_t fallback_frames = 0;        // frames computed by the fallback backend
  uint64_t lost_on_fault = 0;          // frames discarded because the backend failed for good
  // Balanced mode, paced frames: frames the idle reconstructor was already polling for when they
  // arrived (its expected-arrival window), so they cost no thread wake-up.
  uint64_t frames_met_polling = 0;
  QueueStats input;                    // source → reconstructor (drops include an exhausted pool)
  QueueStats output;                   // the fullest sink queue (depth, high-water; no drops)
  SourceStats source;
  std::vector<SinkStats> sinks;  // one per sink, in the order given (the sink's own counters)
  std::vector<SinkQueueStats> sink_queues;  // one per sink, in the same order
  std::string layout;                       // "pipelined" or "run-to-completion"
  std::string latency_mode;                 // "spin", "balanced" or "idle"
  std::string cpu_wake_hold;  // CpuWakeHold taken or why not; empty: not asked (takes_wake_hold)
  std::vector<StageThreadCpu> thread_cpus;  // threads that started, when cpus were given
  std::array<LatencySummary, kSpanCount> latency{};
  LatencySummary sink_call;  // time inside the first sink's publish() per frame
  std::string error;         // the last fault (source or backend), empty if none

  // Frames no sink got (dropped before the fan-out). Per-sink drops: sink_dropped().
  uint64_t dropped() const noexcept { return input.dropped + output.dropped; }
  // Frames sink i missed: its own queue was full (sink_queues) or its send gave up (sinks).
  uint64_t sink_missed(size_t i) const noexcept {
    return (i < sink_queues.size() ? sink_queues[i].queue.dropped : 0) +
           (i < sinks.size() ? sinks[i].dropped : 0);
  }
  uint64_t sink_dropped() const noexcept {
    uint64_t d = 0;
    for (const auto& q : sink_queues) d += q.queue.dropped;
    return d;
  }
};

}  // namespace eit::pipeline
