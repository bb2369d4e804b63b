// libFuzzer target: the batch message of published images (sinks/image_batch.hpp), which every
// receiver (listen, view, bench) parses from whatever a publisher sends. Input: a 2-byte
// little-endian length of the header part, that many bytes of headers, then the payload part.
// Refusal (0 images) is the expected answer to garbage; a crash, an out-of-bounds read (ASan) or
// images that disagree with the parts are bugs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "eit/sinks/image_batch.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t asked = data[0] | (size_t{data[1]} << 8);
  const std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data) + 2, size - 2);
  const size_t split = asked < rest.size() ? asked : rest.size();
  const auto headers = rest.first(split), payloads = rest.subspan(split);
  size_t calls = 0, bytes = 0;
  const size_t n = eit::sinks::for_each_batched_image(
      headers, payloads, [&](const eit::sinks::ImageHeader& h, std::span<const std::byte> p) {
        if (p.size() != size_t{h.count} * sizeof(float)) std::abort();
        if (!eit::sinks::decode_image_header(std::as_bytes(std::span(&h, 1)))) std::abort();
        ++calls;
        bytes += p.size();
      });
  if (n != calls) std::abort();
  if (n > 0 && (bytes != payloads.size() || n * sizeof(eit::sinks::ImageHeader) != headers.size()))
    std::abort();
  return 0;
}
