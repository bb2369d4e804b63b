#pragma once
// Pipeline: stage threads joined by bounded lock-free SPSC queues of FrameSlot pointers, and one
// bounded queue and thread per sink (the areaDetector plugin model).
//
//   source stage ──queue──▶ reconstructor stage ──┬─queue─▶ sink thread 0 ──▶ sinks[0]
//   (read, stamp)           (reference, micro-    ├─queue─▶ sink thread 1 ──▶ sinks[1]
//                            batch, submit/        └─ …     (stamp, publish, histograms,
//                            complete, fan out)              return the slot when last)
//
// Run to completion (PipelineOptions::stages): with a synchronous backend (the CPU) the source
// thread reads, reconstructs and fans out each frame itself: no queue hop before the sinks.
//
// Inline sinks (ImageSink::inline_safe(): publish never waits, allocates or locks, e.g. the
// shared-memory ring) get no queue or thread: the fan-out calls them first, on its own thread,
// and their begin/tick/end too; one thread wake-up less per frame for their consumers.
//
// Policies: kLossless — a stage waits for room downstream, nothing is dropped, and every sink
// queue blocks too; kLive — the source never waits: the newest frame is dropped when the input
// queue (or the pool) is full, counted, and the next delivered frame carries dropped_before; each
// sink queue then follows its sink's policy(): kDropNewest drops for that sink alone (counted per
// sink in PipelineStats::sink_queues), kBlock makes the reconstructor wait for that sink only.
// A stalled kDropNewest sink never stalls the pipeline or the other sinks.
//
// Frame memory for sinks: slots are reference-counted, not copied. The fan-out gives a slot one
// reference per sink queue that took it; the sink thread that drops the last reference returns
// the slot (through its own SPSC return queue) to the source stage. Each sink thread passes its
// sink a stack copy of the slot's small header (seq, stamps, flags, dropped_before for that sink,
// and the pointers to the shared values and image), so per-sink drop counts and publish stamps
// never touch the shared slot. Nothing is allocated per frame.
//
// Waiting (PipelineOptions::latency_mode): stages sleep on futex doorbells (doorbell.hpp) and
// wake within microseconds of work arriving; kSpin never sleeps; kBalanced polls ~spin_ns first,
// and when frames come paced and slowly (≤ 140 frames/s) the idle reconstructor also polls
// (yielding) from 80 µs before to 60 µs after each next frame's expected arrival (ArrivalWindow,
// from the enqueue stamps), so a paced frame costs no wake-up (stats().frames_met_polling).
// kSpin also takes a CpuWakeHold (cpu_wake_hold.hpp) from start() until destruction, so threads
// outside the pipeline that do sleep (libzmq's I/O threads) wake fast too; PipelineOptions::
// wake_hold takes it in the other modes as well (kOn) or never (kOff); stats().cpu_wake_hold
// says whether it was asked for and whether the system granted it.
//
// Stop: request_stop() (any thread) stops the source; every frame already received is still
// reconstructed and handed to the sinks, then the sinks end their series and the threads exit.
// abort() additionally makes waiting stages and sinks give up (frames then count as dropped).
// Backend fault (BackendError or any exception from submit/complete): counted and reported; the
// frames in flight are recomputed on a CPU fallback, which takes over (kFallbackToCpu), or the
// pipeline stops cleanly and counts the frames it could not deliver (kStop).
//
// Ownership: the model, source and sinks are borrowed and must outlive the pipeline; the backend
// is owned. All buffers (pool, queues, scratch) are allocated in the constructor; the stage
// threads never allocate, lock or log. Set-up errors throw std::invalid_argument.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "eit/pipeline/doorbell.hpp"
#include "eit/pipeline/host_allocator.hpp"
#include "eit/pipeline/image_sink.hpp"
#include "eit/pipeline/latency_histogram.hpp"
#include "eit/pipeline/pipeline_stats.hpp"
#include "eit/pipeline/reconstructor.hpp"
#include "eit/pipeline/reference_capture.hpp"
#include "eit/pipeline/source.hpp"
#include "eit/recon/model.hpp"

namespace eit::pipeline {

// PipelineOptions::warm_interval_us unless asked otherwise (run and bench --warm-us too).
inline constexpr int64_t kDefaultWarmIntervalUs = 1000;

enum class Policy { kLossless, kLive };
enum class FaultPolicy { kFallbackToCpu, kStop };
// Which threads do the work before the sinks. kAuto: run to completion when the backend's single
// frames are fast (Reconstructor::fast_single_frames(): the CPU, CUDA) and the source is paced
// at ≥ 500 frames/s (a backend that is not synchronous, CUDA: up to 5,000 frames/s, beyond which
// batching the frames that queue up keeps up with bursts better): the frame period then dwarfs
// the compute and two queue hops are saved; pipelined otherwise (slow rates: the idle
// reconstructor keeps H warm between frames; unpaced: reading and reconstructing overlap on two
// cores and the live input queue counts drops). For the CPU in spin mode on the H200 hosts
// neither layout won everywhere at 1 kHz (docs/benchmarks.md, "Cache warming for H that fits"),
// so auto does not look at the latency mode; for CUDA run to completion won every pair there
// ("Run to completion with the CUDA backend").
enum class StageLayout { kAuto, kPipelined, kRunToCompletion };
std::string_view layout_name(StageLayout layout) noexcept;  // "auto", "pipelined", …
std::optional<StageLayout> layout_from_name(std::string_view name) noexcept;  // its inverse
// The layout a pipeline of this backend and source runs in (kAuto resolved as above); callers
// that lay out their own threads around the pipeline (the bench's CPU pinning) ask it first.
StageLayout resolve_layout(StageLayout asked, const Reconstructor& backend,
                           const Source& source) noexcept;
std::string_view latency_mode_name(LatencyMode mode) noexcept;  // "spin", "balanced", "idle"
std::optional<LatencyMode> latency_mode_from_name(std::string_view name) noexcept;  // its inverse

// Whether the pipeline keeps every CPU out of deep idle while it runs (CpuWakeHold). kAuto: in
// kSpin only. kOn: in any mode. Threads that sleep (stages in balanced mode, libzmq's I/O
// threads, a subscriber on the same host) then wake without a C-state exit or, in a virtual
// machine, without a halted vCPU's wake-up through the hypervisor: on the 2-core VM at 1 kHz,
// end to end p50 198–221 → 126–135 µs (docs/benchmarks.md). The price: idle CPUs poll instead of
// halting while the pipeline runs (power; a VM's vCPUs stay busy on the host). kOff: never.
enum class WakeHold { kAuto, kOn, kOff };
std::string_view wake_hold_name(WakeHold hold) noexcept;  // "auto", "on", "off"
std::optional<WakeHold> wake_hold_from_name(std::string_view name) noexcept;  // its inverse
bool takes_wake_hold(LatencyMode mode, WakeHold hold) noexcept;

struct PipelineOptions {
  Policy policy = Policy::kLossless;
  size_t queue_capacity = 256;     // the input queue (rounded up to a power of two)
  size_t sink_queue_capacity = 0;  // each sink's queue; 0: queue_capacity
  size_t max_batch = 16;           // most frames per backend call (capped by the backend's own)
  ReferenceOptions reference;
  int normalize = -1;  // -1: the model's setting; 0: dv; 1: dv / |v_ref|
  FaultPolicy on_fault = FaultPolicy::kFallbackToCpu;
  uint64_t max_frames = 0;         // stop after this many frames from the source (0: no limit)
  int64_t read_timeout_ms = 50;    // longest a source read blocks before the stop flag is checked
  LatencyMode latency_mode = LatencyMode::kBalanced;
  WakeHold wake_hold = WakeHold::kAuto;
  int64_t spin_ns = 30'000;  // kBalanced: how long a stage polls before it sleeps
  StageLayout stages = StageLayout::kAuto;
  // Pin stage threads (source 0, reconstructor 1, sink i at 2 + i) to cpus[index % size]; empty:
  // none pinned. Failure leaves the thread unpinned and shows in PipelineStats::thread_cpus.
  std::vector<int> cpus;
  // The idle reconstructor calls Reconstructor::warm() this often; 0: never.
  int64_t warm_interval_us = kDefaultWarmIntervalUs;
};

// The CPU that PipelineOptions::cpus gives stage thread `thread_index` (source 0, reconstructor 1,
// sink i at sink_thread(i)); -1 when cpus is empty. A sink that starts helper threads of its own
// (ZmqPublisherOptions::io_cpu) asks here where its sink thread will run.
int stage_cpu(const std::vector<int>& cpus, size_t thread_index) noexcept;
constexpr size_t sink_thread(size_t sink_index) noexcept { return 2 + sink_index; }

// How stage thread `thread_index` polls while it waits for work or room (doorbell.hpp), given the
// stage threads that run (`threads`, by index) and PipelineOptions::cpus: kYield when it is pinned
// to a CPU that another of `threads` is pinned to too, so that a thread it would keep waiting
// (the sink thread it has just woken, a sink's I/O thread) runs at once; kPause otherwise (a CPU
// of its own, or unpinned). On a 2-core VM with --cpus 1 at 50 frames/s the reconstructor's 30 µs
// pausing poll held back the sink thread it had just woken: done → published p50 34 → 5 µs with
// yielding (docs/benchmarks.md, "Stages that share a CPU yield").
PollStyle stage_poll_style(const std::vector<int>& cpus, size_t thread_index,
                           const std::vector<size_t>& threads) noexcept;

class Pipeline {
 public:
  Pipeline(const recon::Model& model, Source& source, std::unique_ptr<Reconstructor> backend,
           std::vector<ImageSink*> sinks, PipelineOptions options = {});
  ~Pipeline();  // request_stop() + wait()
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  void start();                    // starts the stage and sink threads (once)
  void request_stop() noexcept;    // any thread; the stages drain and exit
  void abort() noexcept;           // any thread; like request_stop, and waiting stops
  void wait();                     // joins the threads
  bool finished() const noexcept;  // every stage has exited
  // The source stage has exited (its input ended, or a stop was asked): no frame comes in any
  // more, while the other stages may still be draining.
  bool source_finished() const noexcept;

  // Any thread: capture a new reference from the next n frames.
  void recapture_reference(size_t n_frames) noexcept;

  PipelineStats stats() const;  // any thread
  // Any thread: stats().frames_out alone, without copying the stages' histograms.
  uint64_t frames_out() const noexcept;
  // Any thread: the full histogram of one span of kLatencySpans, or of the sink call, as seen by
  // sink `sink` (default the first; empty without sinks). "published" is when that sink's thread
  // handed the frame to the sink.
  HistogramSnapshot latency(size_t span, size_t sink = 0) const noexcept;
  HistogramSnapshot sink_latency(size_t sink = 0) const noexcept;
  // The layout the stages run in (kAuto resolved at construction).
  StageLayout layout() const noexcept;

  const PipelineOptions& options() const noexcept;
  size_t pool_size() const noexcept;

  struct State;  // shared by the stage threads (pipeline/src/pipeline_state.hpp)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace eit::pipeline
