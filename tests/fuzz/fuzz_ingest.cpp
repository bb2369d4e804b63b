// libFuzzer target: the ingest framing decoder (8 values per frame) must give the same frames
// and counters however the stream is split, and garbage after a frame must never cost that
// frame: a valid frame put in front of the input always comes out first, intact.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "eit/acquisition/ingest_decoder.hpp"
#include "stream_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // First 8 bytes (when present) choose the chunk sizes; the rest is the stream.
  const size_t split = size < 8 ? 0 : 8;
  const std::span<const uint8_t> chunks(data, split), stream(data + split, size - split);
  constexpr size_t kN = 8;
  eit::acquisition::IngestDecoder whole(kN), pieces(kN);
  const auto a = eit::fuzz::decode_in_chunks(whole, stream, {});
  const auto b = eit::fuzz::decode_in_chunks(pieces, stream, chunks);
  eit::fuzz::check_same(a, b, whole, pieces);

  const float known[kN] = {1, -2, 3.5f, 4, 5, 6, 7, 8};
  std::vector<uint8_t> framed(eit::acquisition::ingest_frame_size(
      eit::acquisition::IngestSampleType::kF32, kN));
  eit::acquisition::encode_ingest_frame(framed, eit::acquisition::IngestSampleType::kF32, 7777,
                                        -1, known);
  framed.insert(framed.end(), stream.begin(), stream.end());
  eit::acquisition::IngestDecoder first(kN);
  const auto c = eit::fuzz::decode_in_chunks(first, framed, chunks);
  if (c.frames < 1 || std::memcmp(c.values.data(), known, sizeof(known)) != 0) std::abort();
  if (c.frames != a.frames + 1) std::abort();  // the stream after it decodes as on its own
  return 0;
}
