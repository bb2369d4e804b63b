#pragma once
// StampSink: the ImageSink a benchmark puts around the real sink (the ZeroMQ publisher). Each sink
// runs on its own thread, so the stamp is taken in the same call: StampSink::publish() forwards
// the frame to the inner sink and, when that returns, stamps the moment as "sent" and copies the
// frame's stage stamps into the StampRecorder. Everything else (begin, flush, tick, end, stats,
// policy, abort) is the inner sink's. Sink thread only; no allocation, lock or log
// (StampRecorder::record).
#include "eit/bench/stamp_recorder.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/image_sink.hpp"

namespace eit::bench {

class StampSink final : public pipeline::ImageSink {
 public:
  StampSink(StampRecorder& recorder, pipeline::ImageSink& inner)
      : recorder_(recorder), inner_(inner) {}
  std::string_view name() const noexcept override { return inner_.name(); }
  void begin() noexcept override { inner_.begin(); }
  void publish(const pipeline::FrameSlot& frame) noexcept override {
    inner_.publish(frame);
    const int64_t sent = pipeline::now_ns();
    if (recorder_.record(frame, sent))
      ++recorded_;
    else
      ++dropped_;
  }
  // A publisher with a publish batch sends what it gathered here: "sent" is then when the image
  // joined the batch, and the wait for the rest of the batch shows in published→subscribed.
  void flush() noexcept override { inner_.flush(); }
  void tick(int64_t now_ns) noexcept override { inner_.tick(now_ns); }
  void end() noexcept override { inner_.end(); }
  pipeline::SinkStats stats() const noexcept override { return inner_.stats(); }
  pipeline::SinkPolicy policy() const noexcept override { return inner_.policy(); }
  // Recording a frame's stamps is a store into a pre-sized table: inline as the inner sink is.
  bool inline_safe() const noexcept override { return inner_.inline_safe(); }
  void abort() noexcept override { inner_.abort(); }
  bool take_handoff() noexcept override { return inner_.take_handoff(); }
  // Frames whose stamps were recorded / did not fit the recorder (after the run has stopped).
  uint64_t recorded() const noexcept { return recorded_; }
  uint64_t not_recorded() const noexcept { return dropped_; }

 private:
  StampRecorder& recorder_;
  pipeline::ImageSink& inner_;
  uint64_t recorded_ = 0, dropped_ = 0;
};

}  // namespace eit::bench
