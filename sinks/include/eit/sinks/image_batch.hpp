#pragma once
// The batch message of published images (docs/protocol.md, "Image batch message"): topic
// "eit/<stream>/imgs", then every image's 112-byte ImageHeader back to back in one part, then
// every payload back to back in one part, in the same order. A publisher with a publish batch
// above 1 sends one when several images wait for it, so a busy link pays libzmq's per-message
// cost once per batch; a lone image still goes as the 3-part "img" message.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "eit/sinks/image_header.hpp"

namespace eit::sinks {

inline constexpr std::string_view kImageTopicSuffix = "/img";
inline constexpr std::string_view kImageBatchTopicSuffix = "/imgs";
// A batch holds at most this many images; a receiver treats more as garbage.
inline constexpr size_t kMaxImageBatch = 4096;
// A publisher keeps a batch's payload part within this (receivers bound their messages: listen
// and the view at 4 MiB by default), so large images go in smaller batches.
inline constexpr size_t kMaxBatchPayloadBytes = size_t{4} << 20;

// The publish batch a publisher uses for images of `image_floats` values when `asked` for one:
// at most as many as fit in kMaxBatchPayloadBytes, at least 1.
inline size_t fitting_publish_batch(size_t asked, size_t image_floats) noexcept {
  const size_t fit = kMaxBatchPayloadBytes / std::max<size_t>(image_floats * sizeof(float), 1);
  return std::clamp<size_t>(fit, 1, std::max<size_t>(asked, 1));
}

// Checks a batch's two parts and calls on_image(const ImageHeader&, std::span<const std::byte>
// payload) for each image in order. Returns the number of images, or 0 (calling nothing) when
// the parts are not a batch: a header part that is empty, not a whole number of headers or over
// kMaxImageBatch of them, an invalid header, or a payload part whose size is not the headers'
// counts × 4 bytes.
template <typename OnImage>
size_t for_each_batched_image(std::span<const std::byte> headers,
                              std::span<const std::byte> payloads, OnImage&& on_image) {
  constexpr size_t kHeader = sizeof(ImageHeader);
  if (headers.empty() || headers.size() % kHeader != 0) return 0;
  const size_t n = headers.size() / kHeader;
  if (n > kMaxImageBatch) return 0;
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto h = decode_image_header(headers.subspan(i * kHeader, kHeader));
    if (!h) return 0;
    total += uint64_t{h->count} * sizeof(float);
  }
  if (total != payloads.size()) return 0;
  size_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    ImageHeader h;
    std::memcpy(&h, headers.data() + i * kHeader, kHeader);
    const size_t bytes = size_t{h.count} * sizeof(float);
    on_image(h, payloads.subspan(offset, bytes));
    offset += bytes;
  }
  return n;
}

}  // namespace eit::sinks
