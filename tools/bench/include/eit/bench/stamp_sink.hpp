#pragma once
// StampSink: the ImageSink a benchmark appends after the real sinks. The publish stage calls the
// sinks in order, so when StampSink::publish() runs, the sinks before it (the ZeroMQ publisher)
// have returned: it stamps that moment as "sent" and copies the frame's stage stamps into the
// StampRecorder. Publish-stage thread only; no allocation, lock or log (StampRecorder::record).
#include "eit/bench/stamp_recorder.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/image_sink.hpp"

namespace eit::bench {

class StampSink final : public pipeline::ImageSink {
 public:
  explicit StampSink(StampRecorder& recorder) : recorder_(recorder) {}
  std::string_view name() const noexcept override { return "bench-stamps"; }
  void publish(const pipeline::FrameSlot& frame) noexcept override {
    const int64_t sent = pipeline::now_ns();
    if (recorder_.record(frame, sent))
      ++recorded_;
    else
      ++dropped_;
  }
  pipeline::SinkStats stats() const noexcept override { return {recorded_, dropped_, 0}; }

 private:
  StampRecorder& recorder_;
  // Read by stats() from other threads only after the pipeline has stopped.
  uint64_t recorded_ = 0, dropped_ = 0;
};

}  // namespace eit::bench
