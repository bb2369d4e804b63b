#pragma once
// State shared by the stage threads and sink threads of a Pipeline (private to pipeline/src).
// Each thread writes only its own counters (single-writer relaxed atomics, each group on its own
// cache line); Pipeline::stats() reads them from any thread.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "eit/pipeline/cpu_wake_hold.hpp"
#include "eit/pipeline/doorbell.hpp"
#include "eit/pipeline/frame_pool.hpp"
#include "eit/pipeline/latency_histogram.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/pipeline/reference_capture.hpp"
#include "eit/pipeline/source.hpp"
#include "eit/pipeline/spsc_queue.hpp"
#include "sink_lane.hpp"

namespace eit::pipeline {

// Single-writer counter increment: no read-modify-write needed, readers see whole values.
inline void bump(std::atomic<uint64_t>& c, uint64_t by = 1) noexcept {
  c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

struct Pipeline::State {
  State(const recon::Model& m, Source& src, std::unique_ptr<Reconstructor> backend,
        std::vector<ImageSink*> s, const PipelineOptions& o, size_t pool_slots);

  const recon::Model& model;
  Source& source;
  std::unique_ptr<Reconstructor> primary;   // declared before pool: its frame allocator outlives it
  std::unique_ptr<Reconstructor> fallback;  // CPU, when the policy asks for one
  std::vector<ImageSink*> sinks;
  PipelineOptions options;
  bool normalize = false;
  StageLayout layout = StageLayout::kPipelined;  // resolved (never kAuto)
  // How the source and the reconstructor thread poll while waiting: set by the constructor from
  // stage_poll_style(); the initial value is its unpinned answer.
  PollStyle source_poll = PollStyle::kPause, reconstructor_poll = PollStyle::kPause;

  FramePool pool;
  SpscQueue<FrameSlot*> in_queue;                 // source → reconstructor
  SpscQueue<FrameSlot*> recycle_queue;            // reconstructor → source: slots no sink holds
  // Source thread only: freed slots gathered from recycle_queue and the lanes' returns, the
  // newest on top (capacity: the whole pool, reserved here).
  std::vector<FrameSlot*> freed_slots;
  std::unique_ptr<std::atomic<uint32_t>[]> refs;  // per slot index: sinks still holding it
  std::vector<std::unique_ptr<SinkLane>> lanes;   // one per sink
  ReferenceCapture reference;

  // Doorbells: in_work (source → reconstructor), in_room (reconstructor → source, lossless),
  // slot_freed (reconstructor and sink threads → source, lossless waiting for a slot).
  Doorbell in_work, in_room, slot_freed;

  std::atomic<bool> started{false}, stop_requested{false}, aborted{false};
  std::atomic<bool> source_done{false}, recon_done{false};
  std::atomic<int64_t> started_ns{0};
  std::unique_ptr<CpuWakeHold> wake_hold;  // takes_wake_hold(): taken in start(), until destruction
  // PipelineOptions::cpus: per thread index (source 0, reconstructor 1, sink i at 2 + i), what
  // pinning gave: kPinNotTried until the thread starts, then 0 or pthread_setaffinity_np's error.
  static constexpr int kPinNotTried = -1;
  std::unique_ptr<std::atomic<int>[]> pin_results;

  // Source stage.
  alignas(kCacheLine) std::atomic<uint64_t> frames_in{0};
  std::atomic<uint64_t> input_dropped{0};
  // Reconstructor stage (the fan-out included).
  alignas(kCacheLine) std::atomic<uint64_t> reconstructed{0};
  std::atomic<uint64_t> backend_faults{0};
  std::atomic<uint64_t> fallback_frames{0};
  std::atomic<uint64_t> lost_on_fault{0};
  std::atomic<uint64_t> frames_met_polling{0};
  std::atomic<bool> using_fallback{false};
  std::atomic<uint64_t> frames_out{0};
  std::atomic<uint64_t> non_finite{0};
  std::atomic<uint64_t> reference_frames{0};

  // Faults are rare and off the per-frame path's normal course: a mutex guards the message.
  mutable std::mutex error_mutex;
  std::string error;
  void set_error(std::string message) noexcept;

  // Wakes every waiting thread so it re-reads the stop/abort/done flags.
  void ring_all() noexcept;
  // Waits in the configured latency mode until ready() or deadline_ns.
  template <typename Ready>
  bool wait(Doorbell& bell, int64_t deadline_ns, Ready&& ready, PollStyle style) noexcept {
    return wait_until(bell, options.latency_mode, options.spin_ns, deadline_ns, ready, style);
  }
  // A slot no sink holds any more, back to the source: from the reconstructor thread (or the
  // source thread itself when running to completion).
  void recycle(FrameSlot* f) noexcept {
    recycle_queue.try_push(f);  // sized for the whole pool: never full
    slot_freed.ring();
  }

  std::thread source_thread, reconstruct_thread;
};

void run_source_stage(Pipeline::State& s) noexcept;
void run_reconstruct_stage(Pipeline::State& s) noexcept;
// The source stage that also reconstructs and fans out each frame (StageLayout::kRunToCompletion).
void run_inline_stage(Pipeline::State& s) noexcept;
void run_sink_lane(Pipeline::State& s, SinkLane& lane) noexcept;
// The fan-out: hands a finished frame to every sink's queue (reconstructor thread, or the source
// thread when running to completion). Waits only for kBlock sinks.
void deliver(Pipeline::State& s, FrameSlot* f) noexcept;
// Inline sinks' begin(), tick() (when due; returns the next due time, now + 100 ms without
// inline sinks) and end(), on the thread that runs deliver(): before its first frame, while it
// works or waits, and after its last.
void begin_inline_sinks(Pipeline::State& s) noexcept;
int64_t tick_inline_sinks(Pipeline::State& s, int64_t now) noexcept;
void end_inline_sinks(Pipeline::State& s) noexcept;
// Stage threads ask the kernel for fine-grained timer wake-ups (Linux timer slack 1 µs instead of
// 50 µs) and pin themselves to PipelineOptions::cpus[thread_index % size] when given, recording
// the outcome in State::pin_results (PipelineStats::thread_cpus).
void tune_stage_thread(Pipeline::State& s, size_t thread_index, std::string_view name) noexcept;

}  // namespace eit::pipeline
