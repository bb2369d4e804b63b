#pragma once
// State shared by the three stage threads of a Pipeline (private to pipeline/src).
// Each stage writes only its own counters (single-writer relaxed atomics, each group on its own
// cache line); Pipeline::stats() reads them from any thread.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "eit/pipeline/source.hpp"
#include "eit/pipeline/frame_pool.hpp"
#include "eit/pipeline/latency_histogram.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/pipeline/reference_capture.hpp"
#include "eit/pipeline/spsc_queue.hpp"

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
  std::unique_ptr<Reconstructor> primary;  // declared before pool: its frame allocator outlives it
  std::unique_ptr<Reconstructor> fallback;  // CPU, when the policy asks for one
  std::vector<ImageSink*> sinks;
  PipelineOptions options;
  bool normalize = false;

  FramePool pool;
  SpscQueue<FrameSlot*> in_queue;       // source → reconstructor
  SpscQueue<FrameSlot*> out_queue;      // reconstructor → publish
  SpscQueue<FrameSlot*> recycle_queue;  // reconstructor → source: frames it dropped (live, fault)
  ReferenceCapture reference;

  std::atomic<bool> started{false}, stop_requested{false}, aborted{false};
  std::atomic<bool> source_done{false}, recon_done{false}, publish_done{false};
  std::atomic<int64_t> started_ns{0};

  // Source stage.
  alignas(kCacheLine) std::atomic<uint64_t> frames_in{0};
  std::atomic<uint64_t> input_dropped{0};
  // Reconstructor stage.
  alignas(kCacheLine) std::atomic<uint64_t> reconstructed{0};
  std::atomic<uint64_t> output_dropped{0};
  std::atomic<uint64_t> backend_faults{0};
  std::atomic<uint64_t> fallback_frames{0};
  std::atomic<uint64_t> lost_on_fault{0};
  std::atomic<bool> using_fallback{false};
  // Publish stage.
  alignas(kCacheLine) std::atomic<uint64_t> frames_out{0};
  std::atomic<uint64_t> non_finite{0};
  std::atomic<uint64_t> reference_frames{0};
  std::array<LatencyHistogram, kSpanCount> latency;
  LatencyHistogram sink_latency;

  // Faults are rare and off the per-frame path's normal course: a mutex guards the message.
  mutable std::mutex error_mutex;
  std::string error;
  void set_error(std::string message) noexcept;

  std::thread source_thread, reconstruct_thread, publish_thread;
};

void run_source_stage(Pipeline::State& s) noexcept;
void run_reconstruct_stage(Pipeline::State& s) noexcept;
void run_publish_stage(Pipeline::State& s) noexcept;
// Stage threads ask the kernel for fine-grained sleeps (Linux timer slack 1 µs instead of 50 µs),
// so an idle stage that sleeps wakes close to when it asked.
void tune_stage_thread() noexcept;

}  // namespace eit::pipeline
