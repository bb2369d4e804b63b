// IngestDecoder: a byte-at-a-time header hunt (the magic "EITF" has no repeated prefix, so a
// mismatch never hides the start of a frame), then bulk copies of the payload; the bytes of a
// frame whose payload CRC fails are hunted through again before new input.
#include "eit/acquisition/ingest_decoder.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "eit/acquisition/crc32.hpp"
#include "little_endian.hpp"

namespace eit::acquisition {

IngestDecoder::IngestDecoder(size_t n_values, IngestDecoderOptions options)
    : n_values_(n_values),
      options_(options),
      payload_(n_values * 8),
      replay_(kIngestMaxHeaderLen + n_values * 8) {
  if (n_values == 0 || n_values > kIngestMaxValues) {
    throw std::invalid_argument(fmt::format("ingest decoder: {} values per frame; expected 1..{}",
                                            n_values, kIngestMaxValues));
  }
  // Ingest frames carry n_meas samples; interleaved pairs would need 2·n_meas slots per frame.
  if (options.complex_part == ComplexPart::kInterleaved)
    throw std::invalid_argument(
        "ingest decoder: complex=interleaved is for recordings (--complex interleaved); a live "
        "ingest stream turns complex64 into one part (real, imag or magnitude)");
}

void IngestDecoder::reset() noexcept {
  state_ = State::kHeader;
  header_have_ = 0;
  payload_have_ = 0;
  header_tail_have_ = 0;
  header_tail_left_ = 0;
  replay_pos_ = 0;
  replay_len_ = 0;
}

DecoderStats IngestDecoder::stats() const noexcept {
  return {frames_.load(std::memory_order_relaxed), bad_frames_.load(std::memory_order_relaxed),
          bytes_skipped_.load(std::memory_order_relaxed)};
}

std::string IngestDecoder::last_problem() const {
  switch (last_bad_kind_.load(std::memory_order_relaxed)) {
    case 1:
      return fmt::format(
          "ingest: frame header claiming {} values rejected, the model has {} (resynchronised "
          "on the next valid header)",
          last_bad_count_.load(std::memory_order_relaxed), n_values_);
    case 2:
      return "ingest: frame rejected, payload CRC mismatch";
    case 3:
      return "ingest: frame cut short (the connection or datagram ended inside it)";
    default:
      return {};
  }
}

void IngestDecoder::push_header_byte(uint8_t b) noexcept {
  if (header_have_ < sizeof(kIngestMagic) && b != kIngestMagic[header_have_]) {
    // The bytes gathered so far cannot start a frame; b may (only at magic position 0).
    uint64_t skipped = header_have_;
    header_have_ = 0;
    if (b == kIngestMagic[0]) {
      header_[header_have_++] = b;
    } else {
      ++skipped;
    }
    add(bytes_skipped_, skipped);
    return;
  }
  header_[header_have_++] = b;
}

void IngestDecoder::resync_after_bad_header() noexcept {
  // The magic matched but the header did not check out: its first byte is garbage, and the
  // other 39 may hold the real start of a frame, so hunt through them again.
  uint8_t rest[kIngestHeaderSize - 1];
  std::memcpy(rest, header_ + 1, sizeof(rest));
  header_have_ = 0;
  add(bytes_skipped_, 1);
  for (uint8_t b : rest) push_header_byte(b);
}

void IngestDecoder::start_frame(const IngestHeader& h) noexcept {
  if (h.value_count != n_values_) {
    // The decoder knows the frame size it expects: a header that disagrees is not trusted as a
    // length to skip (a forged one claiming 4 M values would swallow 32 MiB of good frames).
    // It is counted, explained, and hunted past like garbage: the next valid header decodes,
    // whether it follows a whole frame of another size or the forged header itself.
    add(bad_frames_, 1);
    last_bad_count_.store(h.value_count, std::memory_order_relaxed);
    last_bad_kind_.store(1, std::memory_order_relaxed);
    resync_after_bad_header();
    return;
  }
  current_ = h;
  header_have_ = 0;
  header_tail_have_ = 0;
  header_tail_left_ = h.header_len - kIngestHeaderSize;
  payload_have_ = 0;
  state_ = header_tail_left_ > 0 ? State::kSkipHeaderTail : State::kPayload;
}

bool IngestDecoder::finish_payload(pipeline::FrameSlot& slot) noexcept {
  state_ = State::kHeader;
  const size_t size = current_.payload_size();
  if (crc32({payload_.data(), size}) != current_.payload_crc) {
    add(bad_frames_, 1);
    last_bad_kind_.store(2, std::memory_order_relaxed);
    return false;
  }
  const uint8_t* p = payload_.data();
  float* out = slot.values;
  const size_t n = n_values_;
  switch (current_.sample_type) {
    case IngestSampleType::kF32:
      if constexpr (std::endian::native == std::endian::little) {
        std::memcpy(out, p, n * 4);
      } else {
        for (size_t i = 0; i < n; ++i) out[i] = le::load<float>(p + 4 * i);
      }
      break;
    case IngestSampleType::kF64:
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(le::load<double>(p + 8 * i));
      break;
    case IngestSampleType::kI16:
      for (size_t i = 0; i < n; ++i) {
        out[i] = static_cast<float>(le::load<int16_t>(p + 2 * i) * options_.integer_scale);
      }
      break;
    case IngestSampleType::kI32:
      for (size_t i = 0; i < n; ++i) {
        out[i] = static_cast<float>(le::load<int32_t>(p + 4 * i) * options_.integer_scale);
      }
      break;
    case IngestSampleType::kComplex64:
      for (size_t i = 0; i < n; ++i) {
        const float re = le::load<float>(p + 8 * i), im = le::load<float>(p + 8 * i + 4);
        out[i] = options_.complex_part == ComplexPart::kReal   ? re
                 : options_.complex_part == ComplexPart::kImag ? im
                                                               : std::hypot(re, im);
      }
      break;
  }
  slot.seq = current_.seq;
  slot.device_time_ns = (current_.flags & kIngestFlagDeviceTime) ? current_.device_time_ns : 0;
  add(frames_, 1);
  return true;
}

IngestDecoder::Step IngestDecoder::consume(std::span<const uint8_t> in, size_t& pos,
                                           pipeline::FrameSlot& slot) noexcept {
  while (pos < in.size()) {
    switch (state_) {
      case State::kHeader: {
        if (header_have_ == 0) {
          // Fast path over garbage: jump to the next possible magic start.
          const void* e = std::memchr(in.data() + pos, kIngestMagic[0], in.size() - pos);
          const size_t at = e ? static_cast<const uint8_t*>(e) - in.data() : in.size();
          add(bytes_skipped_, at - pos);
          pos = at;
          if (pos == in.size()) break;
        }
        while (pos < in.size() && header_have_ < kIngestHeaderSize) push_header_byte(in[pos++]);
        if (header_have_ < kIngestHeaderSize) break;
        if (auto h = parse_ingest_header({header_, kIngestHeaderSize})) {
          start_frame(*h);
        } else {
          resync_after_bad_header();
        }
        break;
      }
      case State::kSkipHeaderTail: {
        const size_t take = std::min(header_tail_left_, in.size() - pos);
        std::memcpy(header_tail_ + header_tail_have_, in.data() + pos, take);
        header_tail_have_ += take;
        header_tail_left_ -= take;
        pos += take;
        if (header_tail_left_ == 0) state_ = State::kPayload;
        break;
      }
      case State::kPayload: {
        const size_t size = current_.payload_size();
        const size_t take = std::min(size - payload_have_, in.size() - pos);
        std::memcpy(payload_.data() + payload_have_, in.data() + pos, take);
        payload_have_ += take;
        pos += take;
        if (payload_have_ == size) return finish_payload(slot) ? Step::kFrame : Step::kDamaged;
        break;
      }
    }
  }
  return Step::kMore;
}

void IngestDecoder::replay_damaged_frame(size_t rest_from) noexcept {
  // Only the header vouched for the frame's length, and a frame that lost bytes in transit ends
  // inside the next one: the bytes after the damaged frame's magic are hunted through again,
  // ahead of what was still to be replayed from replay_[rest_from..]. Both together never
  // exceed one frame, as the damaged frame began at or after the replay's start.
  const size_t tail = header_tail_have_, payload = current_.payload_size();
  const size_t frame = kIngestHeaderSize - 1 + tail + payload;
  size_t rest = replay_len_ - rest_from;
  if (frame + rest > replay_.size()) {  // not reached (see above); bounded all the same
    add(bytes_skipped_, frame + rest - replay_.size());
    rest = replay_.size() - frame;
  }
  std::memmove(replay_.data() + frame, replay_.data() + rest_from, rest);
  uint8_t* out = replay_.data();
  std::memcpy(out, header_ + 1, kIngestHeaderSize - 1);
  std::memcpy(out + kIngestHeaderSize - 1, header_tail_, tail);
  std::memcpy(out + kIngestHeaderSize - 1 + tail, payload_.data(), payload);
  replay_pos_ = 0;
  replay_len_ = frame + rest;
  add(bytes_skipped_, 1);  // the magic
}

// A frame came out of the replay before any new byte was used, yet decode() must consume one:
// that byte joins the end of the replay, keeping the order of the bytes.
size_t IngestDecoder::defer_input_byte(uint8_t b) noexcept {
  std::memmove(replay_.data(), replay_.data() + replay_pos_, replay_len_ - replay_pos_);
  replay_len_ -= replay_pos_;
  replay_pos_ = 0;
  if (replay_len_ < replay_.size()) {  // always: the frame just out of the replay made room
    replay_[replay_len_++] = b;
  } else {
    add(bytes_skipped_, 1);
  }
  return 1;
}

DecodeResult IngestDecoder::decode(std::span<const uint8_t> in,
                                   pipeline::FrameSlot& slot) noexcept {
  size_t pos = 0;
  for (;;) {
    if (replay_pos_ < replay_len_) {
      size_t p = replay_pos_;
      const Step step = consume({replay_.data(), replay_len_}, p, slot);
      if (step == Step::kDamaged) {
        replay_damaged_frame(p);
        continue;
      }
      replay_pos_ = p;
      if (step == Step::kFrame) {
        if (pos == 0 && !in.empty()) pos = defer_input_byte(in[0]);
        return {pos, true};
      }
      replay_pos_ = replay_len_ = 0;  // all replayed
    }
    const Step step = consume(in, pos, slot);
    if (step != Step::kDamaged) return {pos, step == Step::kFrame};
    replay_damaged_frame(replay_len_);
  }
}

bool IngestDecoder::flush(pipeline::FrameSlot& slot) noexcept {
  // The replay of a damaged frame may still hold a whole frame; anything partial is cut.
  const bool frame = decode({}, slot).frame;
  cut();
  return frame;
}

void IngestDecoder::cut() noexcept {
  uint64_t held = header_have_ + (replay_len_ - replay_pos_);
  if (state_ != State::kHeader) {
    // A header that checked out began a frame whose payload never came whole.
    held += kIngestHeaderSize + header_tail_have_ + payload_have_;
    add(bad_frames_, 1);
    last_bad_kind_.store(3, std::memory_order_relaxed);
  }
  add(bytes_skipped_, held);
  reset();
}

}  // namespace eit::acquisition
