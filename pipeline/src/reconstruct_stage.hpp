#pragma once
// ReconstructStage: the reconstructor stage's work (private to pipeline/src). Pops up to a batch of
// waiting frames (micro-batching: one frame when the queue is short, GEMM when frames pile up),
// handles the reference, submits batches to the backend (several in flight when it allows) and
// hands completed frames, in order, to the sinks' fan-out. Backend faults are caught here; see
// pipeline.hpp for the policy. Runs on its own thread (run()), or inside the source stage one
// frame at a time (run_one(), StageLayout::kRunToCompletion). Never allocates per frame.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "eit/pipeline/arrival_window.hpp"
#include "pipeline_state.hpp"

namespace eit::pipeline {

class ReconstructStage {
 public:
  explicit ReconstructStage(Pipeline::State& s)
      : s_(s),
        n_meas_(s.model.n_meas()),
        n_out_(s.model.n_out()),
        active_(s.primary.get()),
        have_reference_(s.options.reference.mode != ReferenceMode::kCapture) {
    size_t cap = capacity_of(*s.primary);
    if (s.fallback) cap = std::max(cap, capacity_of(*s.fallback));
    batch_.resize(cap);
    done_.resize(cap);
    fifo_.resize(cap);
    update_batch_limit();
    warm_ns_ = s.options.warm_interval_us * 1000;
  }

  // Threaded layout: pops from the input queue until the source is done and the queue empty.
  void run() noexcept;
  // Run to completion (source thread): reconstructs one frame and hands it to the sinks.
  void run_one(FrameSlot* f) noexcept;
  // After the last frame: completes everything still in flight.
  void finish() noexcept { drain_all(); }
  // Idle: warms the backend's caches when warm_interval_us has passed since the last work (when
  // frames come far apart: only from a few warm intervals before the next frame is due, by the
  // mean gap so far). Returns the time by which it wants to be called again.
  int64_t idle(int64_t now) noexcept;

 private:
  static size_t capacity_of(const Reconstructor& r) {
    return std::max<size_t>(1, r.max_batch()) * (std::max<size_t>(1, r.max_in_flight()) + 1);
  }
  void update_batch_limit() noexcept {
    batch_limit_ =
        std::clamp<size_t>(std::min(s_.options.max_batch, active_->max_batch()), 1, batch_.size());
  }
  void fifo_push(FrameSlot* f) noexcept { fifo_[(fifo_head_ + fifo_count_++) % fifo_.size()] = f; }
  FrameSlot* fifo_pop() noexcept {
    FrameSlot* f = fifo_[fifo_head_];
    fifo_head_ = (fifo_head_ + 1) % fifo_.size();
    --fifo_count_;
    return f;
  }

  // Takes one frame dequeued at `now`: flags, reference capture; returns true when it completed a
  // reference capture. Appends it to batch_[n] unless it passed straight on.
  bool take(FrameSlot* f, size_t& n, int64_t now) noexcept;
  static constexpr size_t kStampEvery = 8;
  void emit(FrameSlot* f) noexcept;
  void drop(FrameSlot* f, bool lost) noexcept;
  void submit(size_t n) noexcept;
  size_t drain(bool wait) noexcept;
  void drain_all() noexcept {
    while (fifo_count_ > 0 && !failed_) drain(true);
  }
  void apply_reference() noexcept;
  void on_fault(std::string_view what, std::span<FrameSlot* const> not_submitted) noexcept;

  Pipeline::State& s_;
  const size_t n_meas_, n_out_;
  Reconstructor* active_;
  bool have_reference_;
  bool failed_ = false;
  size_t batch_limit_ = 1;
  std::vector<FrameSlot*> batch_, done_, fifo_;  // fifo_: submitted, not yet completed, in order
  size_t fifo_head_ = 0, fifo_count_ = 0;
  uint64_t pending_drops_ = 0;  // frames lost on a backend fault since the last delivered one
  void note_work(int64_t now) noexcept;  // frames taken at `now`: the mean gap, warming resets

  int64_t warm_ns_ = 0, last_warm_ = 0;
  void warm_now() noexcept {  // the backend's warm-up, stamped when it ends
    active_->warm();
    last_warm_ = now_ns();
  }
  int64_t last_work_ = 0, period_ = 0;  // last frames taken; mean gap between frames (0: unknown)
  // Balanced mode: the idle stage polls around each paced frame's expected arrival (predicted
  // from the frames' enqueue stamps) instead of sleeping through it.
  ArrivalWindow arrivals_;
  bool polling_ahead_ = false;  // in the expected-arrival window when the frame came
};

}  // namespace eit::pipeline
