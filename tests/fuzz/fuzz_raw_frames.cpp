// libFuzzer target: the raw float32 frame decoder (a full 16×16 table mapped to 208) must give
// the same frames however the stream is split, and never more than the bytes hold.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "eit/acquisition/raw_frame_decoder.hpp"
#include "fuzz_support.hpp"
#include "stream_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const size_t split = size < 8 ? 0 : 8;
  const std::span<const uint8_t> chunks(data, split), stream(data + split, size - split);
  eit::acquisition::DeviceLayout layout;
  layout.full_table = true;
  const auto& model = eit::fuzz::protocol();
  eit::acquisition::RawFrameDecoder whole(layout, model, eit::acquisition::SampleType::kFloat32),
      pieces(layout, model, eit::acquisition::SampleType::kFloat32);
  const auto a = eit::fuzz::decode_in_chunks(whole, stream, {});
  const auto b = eit::fuzz::decode_in_chunks(pieces, stream, chunks);
  eit::fuzz::check_same(a, b, whole, pieces);
  if (a.frames != stream.size() / whole.frame_bytes()) std::abort();
  return 0;
}
