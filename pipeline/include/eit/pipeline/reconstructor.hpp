#pragma once
// Reconstructor: the backend interface every compute path implements (CPU/Eigen here, CUDA in
// gpu/).
//
//   image_i = H · w ⊙ (v_i − v_ref)      w = 1, or 1/|v_ref| when normalising
//
// (the caller negates nothing: H is stored with pyEIT's sign folded in, see recon/model.hpp).
// Work is asynchronous so several batches can be in flight: submit() starts a batch of frames
// whose values and image buffers live in FramePool slots; complete() hands batches back in
// submission order. One thread (the reconstructor stage) calls every method. submit() and
// complete() never allocate, lock or log; set-up and set_reference() may.
//
// Frame memory belongs to the backend: whoever builds the FramePool takes its memory from
// frame_allocator() and hands the pool to bind_frames() once, before the first submit(). The CUDA
// backend's allocator gives page-locked, device-mapped memory, so its kernels read and write the
// slots in place; a frame from any other memory is a set-up error, never a silent copy.
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "eit/pipeline/frame.hpp"
#include "eit/pipeline/host_allocator.hpp"

namespace eit::pipeline {

class FramePool;

// A backend fault on the per-frame path (e.g. a CUDA error), naming the failing call. The stage
// catches it, counts it and falls back or stops cleanly; it never escapes a stage thread.
class BackendError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Reconstructor {
 public:
  virtual ~Reconstructor() = default;

  virtual std::string_view name() const noexcept = 0;
  virtual size_t n_meas() const noexcept = 0;
  virtual size_t n_out() const noexcept = 0;
  // Largest batch submit() accepts, and most batches pending at once.
  virtual size_t max_batch() const noexcept = 0;
  virtual size_t max_in_flight() const noexcept = 0;

  // Sets v_ref (n_meas values) and whether to divide by |v_ref|. Not on the per-frame path.
  // Only while nothing is in flight.
  virtual void set_reference(std::span<const double> v_ref, bool normalize) = 0;

  // Starts a batch (1..max_batch frames). False, doing nothing, when max_in_flight batches pend.
  // Frames with kFlagNonFinite set are still passed; their image is written as zeros.
  virtual bool submit(std::span<FrameSlot* const> batch) = 0;

  // Completes the oldest pending batch: writes its frames to `out` (which must hold max_batch)
  // in submission order and returns how many; 0 when nothing is pending, or when the oldest batch
  // is not finished and `wait` is false.
  virtual size_t complete(std::span<FrameSlot*> out, bool wait) = 0;

  virtual size_t in_flight() const noexcept = 0;

  // Set-up: where FramePool memory for this backend must come from. Lives as long as the
  // reconstructor, which must therefore outlive every pool made from it. Default: aligned heap.
  virtual HostAllocator& frame_allocator() { return default_host_allocator(); }
  // Set-up, once per pool, before its slots are submitted (nothing in flight): a backend that
  // uses frames in place records where the pool lies. Throws std::invalid_argument when the
  // pool's memory is not from frame_allocator(). Afterwards submit() of a frame outside the
  // bound pool throws BackendError. Default: nothing to record.
  virtual void bind_frames(const FramePool& pool) { (void)pool; }
  // True when submit() does all the work on the calling thread (complete() only hands the batch
  // back): the pipeline may then read, reconstruct and publish on one thread (StageLayout).
  virtual bool synchronous() const noexcept { return false; }
  // True when submitting one frame and waiting for it on the calling thread is this backend's
  // fastest path for a paced stream (the CPU; the CUDA backend, whose single frames take a few
  // µs): StageLayout::kAuto then runs to completion at paced rates (pipeline.hpp).
  virtual bool fast_single_frames() const noexcept { return synchronous(); }

  // Called by an idle stage now and then (PipelineOptions::warm_interval_us): a backend whose
  // per-frame cost depends on caches touches what the next frame needs (the CPU backend reads H
  // so that a frame arriving after a quiet spell does not find it evicted). Nothing is in flight.
  virtual void warm() noexcept {}
  // Whether warm() does anything: an idle stage schedules no warm-ups (and no wake-ups for them)
  // for a backend that has nothing to keep warm.
  virtual bool warms() const noexcept { return false; }
};

}  // namespace eit::pipeline
