// Reconstructor stage: pops up to a batch of waiting frames (micro-batching: one frame when the
// queue is short, GEMM when frames pile up), handles the reference, submits batches to the
// backend (several in flight when it allows) and passes completed frames on in order.
// Backend faults are caught here; see pipeline.hpp for the policy.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "eit/pipeline/backoff.hpp"
#include "eit/pipeline/clock.hpp"
#include "pipeline_state.hpp"

namespace eit::pipeline {
namespace {

bool all_finite(const float* v, size_t n) noexcept {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i])) return false;
  return true;
}

class ReconstructStage {
 public:
  explicit ReconstructStage(Pipeline::State& s)
      : s_(s),
        live_(s.options.policy == Policy::kLive),
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

  void run() noexcept;

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
  const bool live_;
  const size_t n_meas_, n_out_;
  Reconstructor* active_;
  bool have_reference_;
  bool failed_ = false;
  size_t batch_limit_ = 1;
  std::vector<FrameSlot*> batch_, done_, fifo_;  // fifo_: submitted, not yet completed, in order
  size_t fifo_head_ = 0, fifo_count_ = 0;
  uint64_t pending_drops_ = 0;  // frames dropped in front of the output queue since the last push
  int64_t warm_ns_ = 0, last_warm_ = 0;
};

void ReconstructStage::drop(FrameSlot* f, bool lost) noexcept {
  pending_drops_ = uint64_t{f->dropped_before} + 1;
  bump(lost ? s_.lost_on_fault : s_.output_dropped);
  s_.recycle_queue.try_push(f);  // sized for the whole pool: never full
}

void ReconstructStage::emit(FrameSlot* f) noexcept {
  if (!f->stamp(Stage::kDone)) f->stamp(Stage::kDone, now_ns());
  f->dropped_before = static_cast<uint32_t>(f->dropped_before + pending_drops_);
  bool pushed = s_.out_queue.try_push(f);
  if (!pushed && !live_) {
    Backoff backoff(std::chrono::microseconds(s_.options.max_idle_sleep_us));
    while (!pushed && !s_.aborted.load(std::memory_order_relaxed)) {
      backoff.pause();
      pushed = s_.out_queue.try_push(f);
    }
  }
  if (pushed)
    pending_drops_ = 0;
  else
    drop(f, false);
}

void ReconstructStage::submit(size_t n) noexcept {
  std::span<FrameSlot* const> batch(batch_.data(), n);
  const int64_t t = now_ns();
  for (FrameSlot* f : batch) f->stamp(Stage::kSubmitted, t);
  try {
    while (!active_->submit(batch)) {
      if (drain(true) == 0 && active_->in_flight() == 0) {
        throw BackendError(
            fmt::format("{} refused a batch of {} with nothing in flight", active_->name(), n));
      }
      if (failed_) return;
    }
  } catch (const std::exception& e) {
    on_fault(e.what(), batch);
    return;
  }
  const bool on_fallback = active_ == s_.fallback.get();
  for (FrameSlot* f : batch) {
    if (on_fallback) f->flags |= kFlagBackendFallback;
    fifo_push(f);
  }
}

size_t ReconstructStage::drain(bool wait) noexcept {
  if (fifo_count_ == 0) return 0;
  size_t n = 0;
  try {
    n = active_->complete(done_, wait);
  } catch (const std::exception& e) {
    on_fault(e.what(), {});
    return 0;
  }
  const int64_t t = now_ns();
  for (size_t i = 0; i < n; ++i) {
    FrameSlot* f = fifo_pop();  // completions come back in submission order
    if (!f->stamp(Stage::kDone)) f->stamp(Stage::kDone, t);
    if (f->flags & kFlagBackendFallback) bump(s_.fallback_frames);
    bump(s_.reconstructed);
    emit(f);
  }
  return n;
}

void ReconstructStage::apply_reference() noexcept {
  const auto mean = s_.reference.mean();
  try {
    s_.primary->set_reference(mean, s_.normalize);
    if (s_.fallback) s_.fallback->set_reference(mean, s_.normalize);
    have_reference_ = true;
  } catch (const std::exception& e) {
    s_.set_error(fmt::format("captured reference rejected: {}", e.what()));
  }
}

void ReconstructStage::on_fault(std::string_view what,
                                std::span<FrameSlot* const> not_submitted) noexcept {
  bump(s_.backend_faults);
  const bool can_fall_back = s_.fallback && active_ != s_.fallback.get();
  s_.set_error(fmt::format("backend '{}' failed: {}{}", active_->name(), what,
                           can_fall_back ? "; continuing on the CPU" : "; stopping"));
  // The frames the failed backend held, oldest first, then the batch it refused. (Copied: the
  // fault path may allocate; the batch buffer is reused below.)
  std::vector<FrameSlot*> orphans;
  while (fifo_count_ > 0) orphans.push_back(fifo_pop());
  orphans.insert(orphans.end(), not_submitted.begin(), not_submitted.end());
  if (!can_fall_back) {
    failed_ = true;
    for (FrameSlot* f : orphans) drop(f, true);
    s_.stop_requested.store(true, std::memory_order_release);
    s_.source.stop();
    return;
  }
  active_ = s_.fallback.get();
  s_.using_fallback.store(true, std::memory_order_relaxed);
  update_batch_limit();
  // Redo them on the fallback in order, one at a time (a fault is rare; simplicity wins).
  auto redo = [&](FrameSlot* f) {
    batch_[0] = f;
    f->stamp(Stage::kDone, 0);
    submit(1);
    drain_all();
  };
  for (FrameSlot* f : orphans) {
    if (failed_)
      drop(f, true);
    else
      redo(f);
  }
}

void ReconstructStage::run() noexcept {
  Backoff idle(std::chrono::microseconds(s_.options.max_idle_sleep_us));
  while (true) {
    s_.reference.start_if_requested();
    size_t n = 0;
    bool captured = false;
    while (n < batch_limit_ && !captured) {
      FrameSlot* f = nullptr;
      if (!s_.in_queue.try_pop(f)) break;
      f->stamp(Stage::kDequeued, now_ns());
      if (failed_) {  // backend gone for good: account for what is still queued
        drop(f, true);
        continue;
      }
      if (!all_finite(f->values, n_meas_))
        f->flags |= kFlagNonFinite;
      else if (s_.reference.capturing()) {
        f->flags |= kFlagReference;
        captured = s_.reference.add(f->values);
      }
      if (!have_reference_) {
        // Still capturing the first reference: nothing is in flight yet, so this frame can pass
        // straight on, in order, with an empty image.
        std::memset(f->image, 0, n_out_ * sizeof(float));
        f->stamp(Stage::kSubmitted, f->stamp(Stage::kDequeued));
        emit(f);
        if (captured) apply_reference();
        captured = false;
        continue;
      }
      batch_[n++] = f;
    }
    if (n > 0) {
      idle.reset();
      last_warm_ = now_ns();
      submit(n);
      drain(false);
    }
    if (captured) {  // the frames before it used the old reference; the ones after use the new
      drain_all();
      apply_reference();
    }
    if (n > 0 || captured) continue;
    if (fifo_count_ > 0) {
      drain(true);
      continue;
    }
    if (s_.source_done.load(std::memory_order_acquire) && s_.in_queue.empty_approx()) break;
    if (warm_ns_ > 0 && !failed_) {
      const int64_t t = now_ns();
      if (t - last_warm_ >= warm_ns_) {
        active_->warm();
        last_warm_ = t;
      }
    }
    idle.pause();
  }
  drain_all();
  s_.recon_done.store(true, std::memory_order_release);
}

}  // namespace

void run_reconstruct_stage(Pipeline::State& s) noexcept {
  tune_stage_thread();
  ReconstructStage stage(s);
  stage.run();
}

}  // namespace eit::pipeline
