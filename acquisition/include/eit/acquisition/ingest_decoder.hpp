#pragma once
// IngestDecoder: the StreamDecoder for eitstream's ingest framing (ingest_frame.hpp). Frames of
// exactly n_values values (the model's measurement count, in the model's order) are converted to
// float32 into the slot with the device's seq and time. Anything else is counted, never thrown:
// bytes before a valid header (hunting for the magic; a header whose CRC fails is garbage too)
// go to bytes_skipped. A header (valid CRC) whose value count is not n_values counts as a bad
// frame and is then treated as garbage: the decoder hunts for the next header from the byte
// after its magic and never trusts its length (a forged count cannot swallow good frames), so
// its payload, if any, goes to bytes_skipped too. A payload CRC mismatch on a frame of the
// expected size goes to bad_frames, and its bytes after the magic are hunted through again (a
// frame that lost bytes in transit swallowed the start of the next one, which must not be lost).
//
// Owns buffers of about n_values × 16 bytes allocated at construction; decode() never allocates.
// One thread decodes; stats() and last_problem() may be called from another.
#include <atomic>
#include <cstdint>
#include <vector>

#include "eit/acquisition/ingest_frame.hpp"
#include "eit/acquisition/measurement_map.hpp"  // ComplexPart
#include "eit/acquisition/stream_decoder.hpp"

namespace eit::acquisition {

struct IngestDecoderOptions {
  ComplexPart complex_part = ComplexPart::kReal;  // what a complex64 sample becomes
  double integer_scale = 1.0;                     // i16/i32 samples are multiplied by this
};

class IngestDecoder final : public StreamDecoder {
 public:
  explicit IngestDecoder(size_t n_values, IngestDecoderOptions options = {});

  std::string_view name() const noexcept override { return "ingest"; }
  size_t n_values() const noexcept override { return n_values_; }
  DecodeResult decode(std::span<const uint8_t> in, pipeline::FrameSlot& slot) noexcept override;
  bool flush(pipeline::FrameSlot& slot) noexcept override;
  void reset() noexcept override;
  void cut() noexcept override;
  DecoderStats stats() const noexcept override;
  bool carries_seq() const noexcept override { return true; }
  std::string last_problem() const override;
  // The scale for the frames decoded from now on (a NATS raw frame states its own, Eit-Scale).
  void set_integer_scale(double scale) noexcept { options_.integer_scale = scale; }

 private:
  enum class State { kHeader, kSkipHeaderTail, kPayload };

  void push_header_byte(uint8_t b) noexcept;
  void resync_after_bad_header() noexcept;
  void start_frame(const IngestHeader& h) noexcept;
  bool finish_payload(pipeline::FrameSlot& slot) noexcept;
  // What consume() stopped on: the input ran out, a frame completed, or a frame failed its
  // payload CRC (replay_damaged_frame() must run before anything else is consumed).
  enum class Step { kMore, kFrame, kDamaged };
  Step consume(std::span<const uint8_t> in, size_t& pos, pipeline::FrameSlot& slot) noexcept;
  void replay_damaged_frame(size_t rest_from) noexcept;
  size_t defer_input_byte(uint8_t b) noexcept;
  static void add(std::atomic<uint64_t>& counter, uint64_t n) noexcept {
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  size_t n_values_;
  IngestDecoderOptions options_;
  State state_ = State::kHeader;
  uint8_t header_[kIngestHeaderSize];
  size_t header_have_ = 0;
  IngestHeader current_;
  uint8_t header_tail_[kIngestMaxHeaderLen - kIngestHeaderSize];  // beyond version 1's, unread
  size_t header_tail_have_ = 0, header_tail_left_ = 0;
  size_t payload_have_ = 0;
  std::vector<uint8_t> payload_;  // n_values × 8 bytes
  // Bytes decoded again before new input: those of a damaged frame after its magic, then what
  // was left of an earlier replay. At most one frame's size (kIngestMaxHeaderLen + 8·n_values).
  std::vector<uint8_t> replay_;
  size_t replay_pos_ = 0, replay_len_ = 0;

  std::atomic<uint64_t> frames_{0}, bad_frames_{0}, bytes_skipped_{0};
  std::atomic<uint32_t> last_bad_count_{0};  // value count of the last wrong-length frame
  std::atomic<uint8_t> last_bad_kind_{0};    // 0 none, 1 wrong count, 2 payload CRC, 3 cut short
};

}  // namespace eit::acquisition
