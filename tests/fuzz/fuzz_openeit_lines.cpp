// libFuzzer target: the OpenEIT line decoder (8-electrode layout, 32 values, a 600-byte line
// buffer so overlong lines are reached) must give the same frames however the stream is split.
#include <cstddef>
#include <cstdint>

#include "eit/acquisition/openeit_line_decoder.hpp"
#include "fuzz_support.hpp"
#include "stream_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // First 8 bytes (when present) choose the chunk sizes; the rest is the stream.
  const size_t split = size < 8 ? 0 : 8;
  const std::span<const uint8_t> chunks(data, split), stream(data + split, size - split);
  const auto& model = eit::fuzz::protocol(8);
  eit::acquisition::DeviceLayout layout;
  layout.n_electrodes = 8;
  layout.drive_distance = 4;
  eit::acquisition::OpenEitLineDecoder whole(layout, model, 600), pieces(layout, model, 600);
  const auto a = eit::fuzz::decode_in_chunks(whole, stream, {});
  const auto b = eit::fuzz::decode_in_chunks(pieces, stream, chunks);
  eit::fuzz::check_same(a, b, whole, pieces);
  return 0;
}
