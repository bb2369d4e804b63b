#pragma once
// Pipeline: three threads joined by bounded lock-free SPSC queues of FrameSlot pointers.
//
//   source stage ──queue──▶ reconstructor stage ──queue──▶ publish stage ──▶ sinks, pool
//   (read, stamp)           (reference, micro-batch,       (stamp, sinks, histograms,
//                            submit/complete in order)       release the slot)
//
// Policies: kLossless — a stage waits (Backoff) for room downstream, nothing is dropped;
// kLive — a stage never waits: the newest frame is dropped when the next queue (or the pool) is
// full, counted per queue, and the next delivered frame carries dropped_before.
// Stop: request_stop() (any thread) stops the source; every frame already received is still
// reconstructed and published, then the sinks end their series and the threads exit. abort()
// additionally makes waiting stages and sinks give up (frames then count as dropped).
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
#include <vector>

#include "eit/pipeline/source.hpp"
#include "eit/pipeline/host_allocator.hpp"
#include "eit/pipeline/image_sink.hpp"
#include "eit/pipeline/latency_histogram.hpp"
#include "eit/pipeline/pipeline_stats.hpp"
#include "eit/pipeline/reconstructor.hpp"
#include "eit/pipeline/reference_capture.hpp"
#include "eit/recon/model.hpp"

namespace eit::pipeline {

enum class Policy { kLossless, kLive };
enum class FaultPolicy { kFallbackToCpu, kStop };

struct PipelineOptions {
  Policy policy = Policy::kLossless;
  size_t queue_capacity = 256;  // each of the two queues (rounded up to a power of two)
  size_t max_batch = 16;        // most frames per backend call (capped by the backend's own)
  ReferenceOptions reference;
  int normalize = -1;  // -1: the model's setting; 0: dv; 1: dv / |v_ref|
  FaultPolicy on_fault = FaultPolicy::kFallbackToCpu;
  uint64_t max_frames = 0;          // stop after this many frames from the source (0: no limit)
  int64_t read_timeout_ms = 50;     // longest a source read blocks before the stop flag is checked
  int64_t max_idle_sleep_us = 50;   // longest an idle stage sleeps between polls of its queue
  int64_t warm_interval_us = 1000;  // idle reconstructor: Reconstructor::warm() this often; 0 off
};

class Pipeline {
 public:
  Pipeline(const recon::Model& model, Source& source,
           std::unique_ptr<Reconstructor> backend, std::vector<ImageSink*> sinks,
           PipelineOptions options = {});
  ~Pipeline();  // request_stop() + wait()
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  void start();                    // starts the three threads (once)
  void request_stop() noexcept;    // any thread; the stages drain and exit
  void abort() noexcept;           // any thread; like request_stop, and waiting stops
  void wait();                     // joins the threads
  bool finished() const noexcept;  // every stage has exited

  // Any thread: capture a new reference from the next n frames.
  void recapture_reference(size_t n_frames) noexcept;

  PipelineStats stats() const;  // any thread
  // Any thread: the full histogram of one span of kLatencySpans, or of the sink call.
  HistogramSnapshot latency(size_t span) const noexcept;
  HistogramSnapshot sink_latency() const noexcept;

  const PipelineOptions& options() const noexcept;
  size_t pool_size() const noexcept;

  struct State;  // shared by the stage threads (pipeline/src/pipeline_state.hpp)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace eit::pipeline
