#pragma once
// StreamDecoder: a codec for byte streams (TCP, serial, a file read sequentially, one UDP
// datagram at a time). Bytes go in as they arrive, in chunks of any size; whole frames come out,
// already mapped to the model's measurement order. A decoder keeps partial frames in a bounded
// buffer allocated at construction, so decode() never allocates. On garbage it resynchronises
// (on a magic number, a line end, …) and counts what it skipped rather than throwing.
//
// Usage by a transport:
//   size_t pos = 0;
//   while (pos < chunk.size()) {
//     auto r = decoder.decode(chunk.subspan(pos), slot);
//     pos += r.consumed;
//     if (r.frame) { deliver(slot); slot = next_slot(); }
//   }
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "eit/pipeline/frame.hpp"

namespace eit::acquisition {

struct DecodeResult {
  size_t consumed = 0;  // bytes of the input used (always > 0 when the input is not empty)
  bool frame = false;   // the slot now holds a complete frame (values, seq, device_time_ns)
};

struct DecoderStats {
  uint64_t frames = 0;
  uint64_t bad_frames = 0;     // complete but rejected (wrong value count, unparsable token, …)
  uint64_t bytes_skipped = 0;  // discarded while resynchronising
};

class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  virtual std::string_view name() const noexcept = 0;
  // Values per decoded frame, in the model's order.
  virtual size_t n_values() const noexcept = 0;
  // Consumes bytes from `in` until it ends or one frame completes. Does not stamp times.
  virtual DecodeResult decode(std::span<const uint8_t> in, pipeline::FrameSlot& slot) noexcept = 0;
  // End of stream (a file's end, a peer's orderly close): completes a frame whose terminator
  // never came, e.g. a text file whose last line has no newline. Returns true when the slot now
  // holds a frame; a partial frame that cannot complete is dropped and counted (as cut()).
  virtual bool flush(pipeline::FrameSlot& slot) noexcept = 0;
  // Drops any partial frame, uncounted (a replay that starts the file again).
  virtual void reset() noexcept = 0;
  // The stream broke under a frame (a new connection, the end of a UDP datagram): a frame that
  // had begun is lost, so it is counted as a bad frame and its bytes as skipped. Then as reset().
  virtual void cut() noexcept = 0;
  virtual DecoderStats stats() const noexcept = 0;
  // True when decoded frames carry the device's own sequence number in slot.seq (so a source can
  // find gaps and reordering); false when the format has none and the source numbers frames.
  virtual bool carries_seq() const noexcept { return false; }
  // The most recent rejected input in words ("frame of 207 values, model has 208"), empty when
  // none. Called from a status thread: may allocate, must not touch decode()'s working state.
  virtual std::string last_problem() const { return {}; }
};

}  // namespace eit::acquisition
