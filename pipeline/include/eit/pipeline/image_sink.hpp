#pragma once
// ImageSink: where finished images go (ZeroMQ publisher, recorder, a benchmark's collector).
// Each sink has its own bounded queue and thread (pipeline.hpp): that thread hands it every frame
// the queue took, in order; the frame is only borrowed for the call (its slot is shared,
// reference-counted, with the other sinks) and goes back to the pool once every sink is done, so
// a sink copies what it keeps. A sink never modifies a frame.
//
// Threads: begin(), publish(), flush(), tick() and end() are called on this sink's own thread only;
// stats() and abort() from any thread. publish() must not throw, allocate or log; a sink with a
// lossless policy may block in publish() until its consumer takes the frame or abort() is called.
//
// Inline sinks (inline_safe() true): publish() never blocks or waits, allocates nothing, takes no
// lock and returns in bounded time (a copy into a shared-memory ring plus at most one wake-up).
// Such a sink gets no queue or thread of its own: the fan-out calls it directly on the thread
// that finished the frame (reconstructor, or source when running to completion), which saves a
// thread wake-up per frame. It cannot stall the other sinks, since it cannot wait; begin(),
// publish(), tick() and end() are then all called on that producing thread, in that order.
#include <cstdint>
#include <string_view>

#include "eit/pipeline/frame.hpp"

namespace eit::pipeline {

// What a sink's own bounded queue does when the sink falls behind. Live consumers (PUB, a browser
// view, NATS while it is down) drop the newest frame and count it; lossless ones (PUSH, the
// recorder) make the pipeline wait for them.
enum class SinkPolicy { kDropNewest, kBlock };

struct SinkStats {
  uint64_t sent = 0;     // frames handed on
  uint64_t dropped = 0;  // frames not handed on (consumer too slow, no peer, aborted)
  uint64_t errors = 0;   // sends that failed for another reason
};

class ImageSink {
 public:
  virtual ~ImageSink() = default;
  virtual std::string_view name() const noexcept = 0;
  // Before the first frame (e.g. announce the series).
  virtual void begin() noexcept {}
  virtual void publish(const FrameSlot& frame) noexcept = 0;
  // No further frame is waiting for this sink (its queue ran empty, or the pipeline ends): a sink
  // that gathers frames into one send (ZmqPublisher's publish batch) sends them now, so a frame
  // never waits for the next one. Same rules as publish(); called after each publish() of an
  // inline sink, and before end().
  virtual void flush() noexcept {}
  // Called every ~100 ms by the publish stage, busy or idle (periodic announcements).
  virtual void tick(int64_t now_ns) noexcept {}
  // After the last frame (e.g. announce the end of the series).
  virtual void end() noexcept {}
  virtual SinkStats stats() const noexcept = 0;
  virtual SinkPolicy policy() const noexcept { return SinkPolicy::kDropNewest; }
  // See "Inline sinks" above. A sink that may block, allocate or take unbounded time says false.
  virtual bool inline_safe() const noexcept { return false; }
  // Makes a publish() blocked on a consumer give up (counted as dropped) from now on.
  virtual void abort() noexcept {}
  // True once after a publish() that handed work to helper threads waiting on this thread's CPU
  // for it to yield (ZmqPublisher's I/O threads placed there with IoWake::kDefer). The sink
  // thread then yields at once, before its own bookkeeping: the message leaves as soon as a
  // preempting I/O thread would send it, and publish() itself holds none of the transport's work.
  // Called on the sink's own thread right after each publish().
  virtual bool take_handoff() noexcept { return false; }
  // Whether helper threads the sink hands its work to run on the CPU of the thread that calls
  // publish() (ZmqPublisher's I/O threads placed there). For an inline sink, the producing
  // thread then polls by yielding, as sink threads always do, so those threads get the CPU.
  virtual bool helpers_on_caller_cpu() const noexcept { return false; }
};

}  // namespace eit::pipeline
