#pragma once
// The fixed binary header of a published image (docs/protocol.md, "Published images"): 112 bytes,
// little-endian, packed, followed on the wire by the raw float32 payload in its own message part.
// One numpy structured dtype decodes it (tools/python/subscriber.py).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

namespace eit::sinks {

inline constexpr uint32_t kImageMagic = 0x49544945;  // bytes "EITI"
inline constexpr uint16_t kImageVersion = 1;
inline constexpr uint8_t kDtypeFloat32 = 1;

#pragma pack(push, 1)
struct ImageHeader {
  uint32_t magic = kImageMagic;
  uint16_t version = kImageVersion;
  uint16_t header_bytes = sizeof(ImageHeader);
  uint8_t dtype = kDtypeFloat32;
  uint8_t ndim = 1;  // 2: grid image (shape = ny, nx); 1: mesh values (shape0)
  uint16_t reserved = 0;
  uint32_t shape[2] = {0, 1};       // unused dimensions are 1
  uint32_t dropped_before = 0;      // frames the pipeline dropped since the previous image
  uint64_t seq = 0;                 // the source's frame sequence number
  uint64_t series_id = 0;           // changes when the series (model, geometry) changes
  int64_t t_acquired_ns = 0;        // frame received, CLOCK_MONOTONIC (same-host only)
  int64_t t_published_ns = 0;       // image handed to the socket, CLOCK_MONOTONIC
  int64_t t_device_ns = 0;          // the device's own timestamp, 0 when it sends none
  uint32_t flags = 0;               // pipeline FrameFlag bits
  uint32_t count = 0;               // float32 values in the payload = shape[0]·shape[1]
  char model_id[32] = {};           // the model's id, ASCII, NUL-padded
  int64_t t_published_wall_ns = 0;  // publish time, CLOCK_REALTIME ns since the epoch
};
#pragma pack(pop)
static_assert(sizeof(ImageHeader) == 112);
static_assert(std::endian::native == std::endian::little,
              "the wire format is little-endian; add byte swapping for this platform");

// Validates magic, version, length and dtype; nullopt when the bytes are not an image header.
inline std::optional<ImageHeader> decode_image_header(std::span<const std::byte> bytes) noexcept {
  if (bytes.size() < sizeof(ImageHeader)) return std::nullopt;
  ImageHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.magic != kImageMagic || h.version != kImageVersion || h.header_bytes != sizeof h ||
      h.dtype != kDtypeFloat32 || h.count != uint64_t{h.shape[0]} * h.shape[1])
    return std::nullopt;
  return h;
}

// An image message's header and payload parts checked against each other: the header valid
// (decode_image_header) and the payload exactly its count × 4 bytes; nullopt otherwise.
inline std::optional<ImageHeader> decode_image_message(
    std::span<const std::byte> header, std::span<const std::byte> payload) noexcept {
  const auto h = decode_image_header(header);
  if (!h || payload.size() != uint64_t{h->count} * sizeof(float)) return std::nullopt;
  return h;
}

}  // namespace eit::sinks
