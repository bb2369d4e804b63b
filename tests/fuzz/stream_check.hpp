#pragma once
// Feeds one input to two decoders of the same kind, whole and in chunks whose sizes come from the
// input itself, and aborts unless both give the same frames, values and counters: a decoder's
// output must not depend on how the bytes were split by the transport.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "eit/acquisition/stream_decoder.hpp"
#include "eit/pipeline/frame.hpp"

namespace eit::fuzz {

struct DecodedStream {
  std::vector<float> values;  // all frames, concatenated
  uint64_t frames = 0;
};

inline DecodedStream decode_in_chunks(acquisition::StreamDecoder& d, std::span<const uint8_t> input,
                                      std::span<const uint8_t> chunk_sizes) {
  DecodedStream out;
  std::vector<float> values(d.n_values());
  pipeline::FrameSlot slot;
  slot.values = values.data();
  auto keep = [&] {
    out.values.insert(out.values.end(), values.begin(), values.end());
    ++out.frames;
  };
  size_t at = 0, c = 0;
  while (at < input.size()) {
    size_t len =
        chunk_sizes.empty() ? input.size() : size_t(chunk_sizes[c++ % chunk_sizes.size()]) + 1;
    len = std::min(len, input.size() - at);
    std::span<const uint8_t> in = input.subspan(at, len);
    while (!in.empty()) {
      const acquisition::DecodeResult r = d.decode(in, slot);
      if (r.consumed == 0 || r.consumed > in.size()) std::abort();
      in = in.subspan(r.consumed);
      if (r.frame) keep();
    }
    at += len;
  }
  if (d.flush(slot)) keep();
  return out;
}

inline void check_same(const DecodedStream& a, const DecodedStream& b,
                       const acquisition::StreamDecoder& da, const acquisition::StreamDecoder& db) {
  if (a.frames != b.frames || a.values.size() != b.values.size()) std::abort();
  // (memcmp of two empty vectors would pass null pointers: undefined, UBSan says.)
  if (!a.values.empty() &&
      std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)) != 0)
    std::abort();
  const auto sa = da.stats(), sb = db.stats();
  if (sa.frames != sb.frames || sa.bad_frames != sb.bad_frames ||
      sa.bytes_skipped != sb.bytes_skipped)
    std::abort();
}

}  // namespace eit::fuzz
