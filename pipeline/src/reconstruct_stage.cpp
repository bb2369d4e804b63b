// Reconstructor stage (contract in reconstruct_stage.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <span>
#include <vector>

#include <sched.h>

#include <fmt/format.h>

#include "eit/pipeline/all_finite.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/prefetch.hpp"
#include "reconstruct_stage.hpp"

namespace eit::pipeline {

void ReconstructStage::drop(FrameSlot* f, bool lost) noexcept {
  // Every drop here is a frame lost on a backend fault (`lost` kept for the call sites' clarity).
  (void)lost;
  pending_drops_ += uint64_t{f->dropped_before} + 1;
  bump(s_.lost_on_fault);
  s_.recycle(f);
}

void ReconstructStage::emit(FrameSlot* f) noexcept {
  // The output is checked as well as the input: finite values can still overflow float32 in
  // H·(v − v_ref) (1e38 everywhere gives ±inf pixels), whatever the backend.
  if (!(f->flags & kFlagNonFinite) && !all_finite(f->image, n_out_)) {
    std::memset(f->image, 0, n_out_ * sizeof(float));
    f->flags |= kFlagNonFinite | kFlagImageOverflow;
  }
  f->dropped_before = static_cast<uint32_t>(f->dropped_before + pending_drops_);
  pending_drops_ = 0;
  deliver(s_, f);
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
    // emit() scans each image (all_finite): fetch the next one meanwhile.
    if (i + 1 < n) prefetch_for_read(fifo_[fifo_head_]->image, n_out_ * sizeof(float));
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
    // A recapture that is refused keeps the reference in use. The first one has none to keep:
    // without a new capture every later image would stay empty, so capture again from the next
    // frames (a channel that read 0 while the electrodes settled may read properly by then).
    s_.set_error(fmt::format("captured reference rejected: {}{}", e.what(),
                             have_reference_ ? "; the previous reference stays in use"
                                             : "; no images until a reference is accepted: "
                                               "capturing again"));
    if (!have_reference_) {
      s_.reference.request_again();
      s_.reference.start_if_requested();  // from the very next frame
    }
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

bool ReconstructStage::take(FrameSlot* f, size_t& n, int64_t now) noexcept {
  f->stamp(Stage::kDequeued, now);
  if (failed_) {  // backend gone for good: account for what is still queued
    drop(f, true);
    return false;
  }
  bool captured = false;
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
    return false;
  }
  batch_[n++] = f;
  return captured;
}

void ReconstructStage::note_work(int64_t now) noexcept {
  if (last_work_ > 0) {
    const int64_t gap = now - last_work_;
    period_ = period_ == 0 ? gap : (7 * period_ + gap) / 8;  // mean gap between frames
  }
  last_work_ = last_warm_ = now;
}

int64_t ReconstructStage::idle(int64_t now) noexcept {
  if (warm_ns_ <= 0 || failed_ || !active_->warms()) return now + 100'000'000;
  // Frames far apart (50 Hz: 20 ms): warm twice before the next one is due, kWarmLead warm
  // intervals before it and a quarter interval before it, not all the way through the gap (a 0.85
  // MB H re-read every 1 ms cost ~6 % of a core at 50 Hz on the 2-core machine; every interval from
  // the lead on, 4-5 passes a frame, was still 40 % of this thread's time there). The lead covers
  // a late timed wake-up on a loaded machine (with a lead of 1 the frame often came first: compute
  // p50 +20-45 µs); the last pass, whatever evicted H since the first. A frame later than due
  // finds the cache warm all the same (every interval, below), one early by more than the lead
  // may find it cold.
  constexpr int64_t kWarmLead = 4;
  if (period_ > 2 * kWarmLead * warm_ns_) {
    const int64_t due = last_work_ + period_;
    const int64_t first = due - kWarmLead * warm_ns_, last = due - warm_ns_ / 4;
    if (now < first) return first;
    if (last_warm_ < first) warm_now();
    if (now < last) return std::max(last, last_warm_ + warm_ns_ / 2);
    if (last_warm_ < last) warm_now();
  } else if (period_ >= warm_ns_ / 2) {
    // Frames close together (1 kHz): once per gap, a quarter of it before the next frame is
    // due, so that the warm-up is over when the frame comes (every warm interval from the last
    // work would fall on the frame itself at 1 kHz); then every interval if the frame is late.
    // Closer still (unpaced bursts): only after a pause of a warm interval, below.
    const int64_t from = last_work_ + period_ - period_ / 4;
    if (now < from) return from;
    if (last_warm_ < from) warm_now();
  }
  if (now - last_warm_ >= warm_ns_) warm_now();
  return last_warm_ + warm_ns_;
}

void ReconstructStage::run_one(FrameSlot* f) noexcept {
  s_.reference.start_if_requested();
  size_t n = 0;
  const bool captured = take(f, n, now_ns());
  if (n > 0) submit(n);
  drain_all();
  if (captured) apply_reference();
  note_work(now_ns());
}

void ReconstructStage::run() noexcept {
  int64_t next_tick = 0;  // inline sinks' tick(), on this thread (sink_fanout.cpp)
  while (true) {
    if (const int64_t t = now_ns(); t >= next_tick) next_tick = tick_inline_sinks(s_, t);
    s_.reference.start_if_requested();
    size_t n = 0;
    bool captured = false;
    size_t popped = 0;
    int64_t t = 0;
    while (n < batch_limit_ && !captured) {
      FrameSlot* f = nullptr;
      if (!s_.in_queue.try_pop(f)) break;
      // The dequeue stamp: one clock read per kStampEvery frames popped back to back (a take is
      // tens of ns, so a stamp is at most a few hundred ns early; a clock read costs ~20 ns).
      // Read it anew for a frame enqueued after the last read (stamps never run backwards), and
      // before the first reference, when a take publishes the frame itself.
      if (popped++ % kStampEvery == 0 || !have_reference_ || f->stamp(Stage::kEnqueued) > t)
        t = now_ns();
      captured = take(f, n, t);
    }
    if (popped) s_.in_room.ring();
    if (n > 0) {
      if (polling_ahead_) bump(s_.frames_met_polling, n);
      polling_ahead_ = false;
      arrivals_.note(batch_[n - 1]->stamp(Stage::kEnqueued));
      note_work(now_ns());
      submit(n);
      drain(false);
    }
    if (captured) {  // the frames before it used the old reference; the ones after use the new
      drain_all();
      apply_reference();
    }
    if (popped) continue;
    if (fifo_count_ > 0) {
      drain(true);
      continue;
    }
    if (s_.source_done.load(std::memory_order_acquire) && s_.in_queue.empty_approx()) break;
    const int64_t now = now_ns();
    const auto ready = [&] {
      return !s_.in_queue.empty_approx() || s_.source_done.load(std::memory_order_acquire);
    };
    const ArrivalWindow::Span expected =
        s_.options.latency_mode == LatencyMode::kBalanced && !failed_ ? arrivals_.next()
                                                                      : ArrivalWindow::Span{};
    polling_ahead_ = expected.contains(now);
    if (polling_ahead_) {
      // Yielding, not pausing: on a machine with few cores the thread about to send the frame
      // may be waiting for this very CPU. No cache warming here (idle() is not called): the
      // frame is due, H was warmed within the last warm interval, and a warm-up now would only
      // make the frame wait for it.
      const int64_t until = std::min(next_tick, expected.to);
      while (!ready() && now_ns() < until) sched_yield();
    } else {
      int64_t deadline = std::min(idle(now), next_tick);
      if (now < expected.from) deadline = std::min(deadline, expected.from);
      s_.wait(s_.in_work, deadline, ready, s_.reconstructor_poll);
    }
  }
  drain_all();
}

void run_reconstruct_stage(Pipeline::State& s) noexcept {
  tune_stage_thread(s, 1, "eit-reconstruct");
  begin_inline_sinks(s);
  {
    ReconstructStage stage(s);
    stage.run();
  }
  end_inline_sinks(s);
  s.recon_done.store(true, std::memory_order_release);
  s.ring_all();
}

}  // namespace eit::pipeline
