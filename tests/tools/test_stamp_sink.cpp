// StampSink, the bench's wrapper around its publisher, hands every call on: a publisher with a
// publish batch sends only when flushed, so a flush it swallowed would hold images back.
#include <doctest/doctest.h>

#include <string>

#include "eit/bench/stamp_recorder.hpp"
#include "eit/bench/stamp_sink.hpp"

namespace {

class CallLog final : public eit::pipeline::ImageSink {
 public:
  std::string calls;
  std::string_view name() const noexcept override { return "log"; }
  void begin() noexcept override { calls += 'b'; }
  void publish(const eit::pipeline::FrameSlot&) noexcept override { calls += 'p'; }
  void flush() noexcept override { calls += 'f'; }
  void tick(int64_t) noexcept override { calls += 't'; }
  void end() noexcept override { calls += 'e'; }
  eit::pipeline::SinkStats stats() const noexcept override { return {7, 0, 0}; }
};

}  // namespace

TEST_CASE("StampSink forwards begin, publish, flush, tick, end and stats to its inner sink") {
  eit::bench::StampRecorder recorder(4, 0);
  CallLog inner;
  eit::bench::StampSink sink(recorder, inner);
  eit::pipeline::FrameSlot frame;
  frame.seq = 2;
  sink.begin();
  sink.publish(frame);
  sink.flush();
  sink.tick(1);
  sink.end();
  CHECK(inner.calls == "bpfte");
  CHECK(sink.stats().sent == 7);
}
