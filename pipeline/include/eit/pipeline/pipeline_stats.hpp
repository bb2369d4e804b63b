#pragma once
// PipelineStats: one consistent-enough snapshot of a running pipeline's counters, taken by
// Pipeline::stats() from any thread without stopping the stages (each counter is read atomically;
// counters of different stages may be a frame apart).
//
// Latency spans: each is the time between two stamps of a frame (frame.hpp Stage), recorded by the
// publish stage for every delivered frame. "dequeued→done" is the per-frame reconstruction path;
// "received→published" is the whole pipeline; "scheduled→published" adds the source's own lateness.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "eit/pipeline/source.hpp"
#include "eit/pipeline/frame.hpp"
#include "eit/pipeline/image_sink.hpp"
#include "eit/pipeline/latency_histogram.hpp"

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

struct PipelineStats {
  int64_t now_ns = 0, started_ns = 0;  // clock.hpp now_ns()
  bool running = false;                // some stage is still running
  std::string backend;                 // the backend now in use ("cpu", "cuda", …)
  uint64_t frames_in = 0;              // frames the source delivered
  uint64_t frames_reconstructed = 0;   // frames out of the backend
  uint64_t frames_out = 0;             // frames handed to the sinks
  uint64_t non_finite = 0;             // delivered frames flagged kFlagNonFinite
  uint64_t reference_frames = 0;       // delivered frames flagged kFlagReference
  uint64_t reference_captures = 0;     // references captured from the stream
  uint64_t backend_faults = 0;         // BackendErrors caught
  uint64_t fallback_frames = 0;        // frames computed by the fallback backend
  uint64_t lost_on_fault = 0;          // frames discarded because the backend failed for good
  QueueStats input;                    // source → reconstructor (drops include an exhausted pool)
  QueueStats output;                   // reconstructor → publish
  SourceStats source;
  std::vector<SinkStats> sinks;  // one per sink, in the order given
  std::array<LatencySummary, kSpanCount> latency{};
  LatencySummary sink_call;  // time inside the sinks' publish() per frame
  std::string error;         // the last fault (source or backend), empty if none

  uint64_t dropped() const noexcept { return input.dropped + output.dropped; }
};

}  // namespace eit::pipeline
