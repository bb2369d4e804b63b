#pragma once
// One benchmark run's configuration and results, and analyze_run(), which turns a StampRecorder's
// per-frame stamps into per-interval latency summaries.
//
// Intervals are the differences of *consecutive* stamps of one frame along the chain
// scheduled → received → enqueued → dequeued → submitted → done → published → subscribed, so for
// every frame they add up exactly to its end-to-end latency (subscribed − scheduled): the sum
// telescopes. Means therefore add up too. The "sent" stamp (the send call returned) is reported
// on the side (send_call, frame_to_image), not in the chain: a subscriber can hold the image
// before the publishing thread returns from the call, so it has no fixed place in the order.
// Percentiles do not: the p99 of a sum is neither the sum of the p99s nor bounded by it in
// general (the slowest frames of one stage are rarely the slowest of another), which is why the
// report gives end to end its own row, computed from per-frame sums, not from the stage rows.
//
// All intervals of a run are computed over the same frames: those after the warm-up that carry
// every stamp in non-decreasing order. Frames missing a stamp are counted (dropped in the
// pipeline, lost in transport), never silently averaged in.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "eit/bench/cpu_pinning.hpp"
#include "eit/bench/latency_summary.hpp"
#include "eit/bench/stamp_recorder.hpp"
#include "eit/pipeline/pipeline.hpp"

namespace eit::bench {

// The synthetic source's poll before each due frame outside spin mode (RunConfig::source_poll_us).
// A device's frame is stamped when it arrives; a sleeping source stamps its due time and then
// wakes late by the host's timer latency (~35 µs p50 on the 2-core VM), which is the host's, not
// the pipeline's. 50 µs: 0.25 % of a core at 50 Hz, 5 % at 1 kHz.
inline constexpr size_t kDefaultSourcePollUs = 50;

struct RunConfig {
  std::string backend;  // "cpu", "cuda"
  std::string model;    // "random 1024x208 (seed 1)" or a model file's path and id
  size_t n_out = 0, n_meas = 0;
  size_t batch = 1;        // the reconstructor's largest batch
  size_t publish_batch = 1;  // the publisher's most images per message (ZmqPublisherOptions)
  size_t cpu_threads = 1;  // threads of the CPU backend
  std::string transport;   // "inproc", "ipc", "tcp"
  std::string endpoint;
  double rate_hz = 0;                     // offered rate; 0 = as fast as the pipeline takes frames
  size_t frames = 0;                      // measured frames (after warm-up)
  size_t warmup = 0;                      // frames excluded at the start
  std::string policy;                     // "lossless" or "live"
  std::string stages = "auto";            // pipeline layout: auto, pipelined, run-to-completion
  std::string latency_mode = "balanced";  // how stages wait: spin, balanced, idle
  std::string layout;                     // the layout the run actually used (auto resolved)
  std::string pattern;                    // "pub" (live) or "push" (lossless)
  std::string wake_hold = "auto";         // --cpu-wake-hold asked: auto (spin only), on, off
  std::string cpu_wake_hold;              // the pipeline's CpuWakeHold, held or why not ("": none)
  CpuRequest cpu_request;                 // --cpus (cpu_pinning.hpp); none: nothing pinned
  std::vector<ThreadCpu> cpus;            // the run's threads, their CPUs and how pinning went
  // ZeroMQ with --cpus, where both ends' I/O threads run (--zmq-io-cpu): "sink", on the sink
  // thread's CPU (the reference's: its sender's), in every latency mode; spin mode only: "own",
  // together on one more CPU that no other thread of the run has (the reference's likewise),
  // kept out of idle by a CpuKeeper; "own-idle", the same CPU left to idle between messages;
  // "any", where the kernel puts them.
  std::string zmq_io_cpu = "sink";
  std::string cpu_keeper;  // "own": the CpuKeeper of the I/O threads' CPU, or why not ("": none)
  // "defer": placed I/O threads start at SCHED_BATCH and wait for the sending thread to yield
  // instead of preempting it inside the send call (sinks::IoWake); "preempt": the kernel's choice.
  std::string zmq_io_wake = "preempt";
  // "inline": the ZeroMQ publisher sends on the thread that finished the frame, with no sink
  // thread (ZmqPublisherOptions::send_inline; live, publish batch 1); "lane": its own thread.
  std::string zmq_send = "lane";
  // Whether the source's clock polls yield: another stage thread shares its CPU (--cpus with
  // fewer CPUs than threads), which would otherwise wait for the scheduler's time slice.
  bool source_yields = false;
  bool cuda_l2 = true;     // CUDA: keep H in persisting L2 where it fits (CudaOptions::l2_persist)
  // PipelineOptions::warm_interval_us: the idle reconstructor's warm-ups.
  size_t warm_us = pipeline::kDefaultWarmIntervalUs;
  // Paced, balanced and idle modes: the source polls the clock for this long before each frame is
  // due instead of waking from a sleep at the due time (spin mode polls the whole wait).
  size_t source_poll_us = kDefaultSourcePollUs;

  // "own" or "own-idle": the I/O threads have a CPU of their own (in spin mode).
  bool own_io_cpu() const noexcept { return zmq_io_cpu == "own" || zmq_io_cpu == "own-idle"; }

  std::string label() const;  // "cpu 1024x208 b1 tcp 50 Hz"
  // latency_mode, stages and wake_hold as the pipeline's options (bench_plan checked the names).
  pipeline::LatencyMode pipeline_latency_mode() const noexcept;
  pipeline::StageLayout pipeline_stages() const noexcept;
  pipeline::WakeHold pipeline_wake_hold() const noexcept;
  // Whether the run keeps CPUs out of deep idle (pipeline::takes_wake_hold).
  bool wants_wake_hold() const noexcept;
};

// Counters the pipeline and its stages keep themselves (whole run, warm-up included).
struct PipelineCounters {
  uint64_t produced = 0;      // frames the source delivered into the pipeline
  uint64_t dropped = 0;       // frames the pipeline dropped (live policy, full queue)
  uint64_t published = 0;     // frames the publisher sent
  uint64_t send_dropped = 0;  // frames the publisher could not send (high-water mark)
  uint64_t non_finite = 0;    // frames with NaN/Inf
  uint64_t backend_errors = 0;
  uint64_t met_polling = 0;  // balanced: frames the idle reconstructor was polling for already
  uint64_t subscriber_received = 0;  // images the subscriber got (any seq)
  uint64_t subscriber_batches = 0;   // batch messages ("imgs") they came in
  // Queue name → {high-water mark, capacity}.
  std::vector<std::pair<std::string, std::pair<size_t, size_t>>> queue_high_water;
};

struct IntervalResult {
  std::string name;  // "source", "enqueue", "queue", "batch", "compute", "out_queue", "transport"
  size_t from = 0, to = 0;  // StampRecorder columns
  LatencySummary summary;
  std::vector<int64_t> sorted_ns;  // every sample, ascending (for CDFs)
};

struct RunResult {
  RunConfig config;
  PipelineCounters counters;

  uint64_t first_seq = 0;
  size_t frames_total = 0;  // warm-up + measured seqs the run asked for
  size_t warmup_excluded = 0;
  size_t measured = 0;       // frames in the measured window with every stamp (the sample set)
  size_t not_published = 0;  // measured-window frames that never reached the publisher
  size_t not_received = 0;   // published in the window but never seen by the subscriber
  size_t inconsistent = 0;   // stamps out of order (a clock or stamping bug; excluded)

  double offered_fps = 0;    // the schedule's rate over the measured window
  double delivered_fps = 0;  // images received per second over the measured window
  double window_s = 0;       // first scheduled → last received, measured window

  std::vector<IntervalResult> intervals;  // consecutive-stamp intervals, in stage order
  IntervalResult end_to_end;              // scheduled → subscribed
  IntervalResult pipeline;                // scheduled → published (without the transport)
  IntervalResult frame_to_image;          // received → sent: a frame's own path through
                                          // eitstream (what the pyEIT comparison measures)
  IntervalResult send_call;               // published → sent: the sinks' publish() calls

  // Per measured frame in seq order: seconds since the window's first scheduled time, and its
  // end-to-end latency in ns.
  std::vector<std::pair<double, int64_t>> end_to_end_over_time;
  // Largest |Σ intervals − end to end| over all frames; 0 unless the arithmetic is broken.
  int64_t max_sum_error_ns = 0;
};

// The stamp columns of the chain, in order, and the names of the intervals between them.
inline constexpr std::array<size_t, 8> kChain{0, 1, 2, 3, 4, 5, 6, kSubscriberColumn};
inline constexpr size_t kChainIntervals = kChain.size() - 1;
std::string_view interval_name(size_t index) noexcept;  // "source", …, "transport"

// Analyses seqs [first_seq, first_seq + config.warmup + config.frames) of `recorder`.
RunResult analyze_run(const StampRecorder& recorder, uint64_t first_seq, const RunConfig& config,
                      const PipelineCounters& counters);

}  // namespace eit::bench
