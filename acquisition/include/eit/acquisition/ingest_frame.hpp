#pragma once
// eitstream's ingest framing (device → eitstream), the wire format documented for firmware
// authors in docs/protocol.md, "Ingest framing". Every frame is a fixed little-endian header of
// kIngestHeaderSize bytes followed by value_count samples of one sample type:
//
//   off size field
//     0    4 magic "EITF"
//     4    1 version (1)
//     5    1 sample type (IngestSampleType)
//     6    2 header length in bytes (40 in version 1; the payload starts there)
//     8    8 seq, u64, +1 per frame produced by the device
//    16    8 device time, i64 ns (meaningful when flags bit 0 is set)
//    24    4 value count, u32 (a complex64 sample counts as one value)
//    28    2 flags (bit 0: device time valid); other bits 0
//    30    2 reserved, 0
//    32    4 CRC-32 of the payload
//    36    4 CRC-32 of header bytes 0..35
//
// Plain functions, no state, no allocation; any thread.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace eit::acquisition {

inline constexpr uint8_t kIngestMagic[4] = {'E', 'I', 'T', 'F'};
inline constexpr uint8_t kIngestVersion = 1;
inline constexpr size_t kIngestHeaderSize = 40;         // version 1; later versions may be longer
inline constexpr uint32_t kIngestMaxValues = 1u << 22;  // sanity bound on value_count
inline constexpr uint16_t kIngestMaxHeaderLen = 256;    // sanity bound on header_len
inline constexpr uint16_t kIngestFlagDeviceTime = 1u << 0;

enum class IngestSampleType : uint8_t {
  kF32 = 1,
  kF64 = 2,
  kI16 = 3,
  kI32 = 4,
  kComplex64 = 5,  // real f32 then imaginary f32
};

// Bytes per sample; 0 for an unknown type.
size_t ingest_sample_size(IngestSampleType type) noexcept;
std::string_view to_string(IngestSampleType type) noexcept;
// "f32" | "f64" | "i16" | "i32" | "complex64"; throws std::invalid_argument naming the choices.
IngestSampleType parse_ingest_sample_type(std::string_view text);

struct IngestHeader {
  uint8_t version = kIngestVersion;
  IngestSampleType sample_type = IngestSampleType::kF32;
  uint16_t header_len = kIngestHeaderSize;
  uint64_t seq = 0;
  int64_t device_time_ns = 0;
  uint32_t value_count = 0;
  uint16_t flags = 0;
  uint32_t payload_crc = 0;

  size_t payload_size() const noexcept {
    return size_t{value_count} * ingest_sample_size(sample_type);
  }
};

// Parses and checks the first kIngestHeaderSize bytes: magic, header CRC, a known sample type,
// version >= 1, 40 <= header_len <= kIngestMaxHeaderLen, value_count <= kIngestMaxValues. nullopt
// when any check fails.
std::optional<IngestHeader> parse_ingest_header(std::span<const uint8_t> bytes) noexcept;

// Bytes of a whole version-1 frame of n values.
size_t ingest_frame_size(IngestSampleType type, size_t n_values) noexcept;

// Encodes one frame into `out` (at least ingest_frame_size(type, values.size()) bytes) and
// returns the bytes written, 0 when `out` is too small. Values are converted to `type`
// (complex64 gets imaginary part 0); integers carry value / integer_scale, rounded and saturated,
// for a receiver that multiplies by the same scale (its scale= option). `device_time_ns` < 0
// means "no device time" (flags bit 0 clear).
size_t encode_ingest_frame(std::span<uint8_t> out, IngestSampleType type, uint64_t seq,
                           int64_t device_time_ns, std::span<const float> values,
                           double integer_scale = 1.0) noexcept;

// How many of `values` encode_ingest_frame saturates as integers of `type` at `integer_scale`
// (out of the type's range, or not finite); 0 for the float types.
size_t ingest_integer_overflows(IngestSampleType type, std::span<const float> values,
                                double integer_scale) noexcept;
// The largest magnitude an integer sample of `type` carries (32767, 2147483647); 0 for floats.
double ingest_integer_limit(IngestSampleType type) noexcept;

// As above for complex samples: interleaved (re, im) pairs, values.size() / 2 values.
size_t encode_ingest_frame_complex(std::span<uint8_t> out, uint64_t seq, int64_t device_time_ns,
                                   std::span<const float> interleaved) noexcept;

// A frame whose payload is already in wire format (`payload` = value_count samples of `type`):
// writes the header only, into the first kIngestHeaderSize bytes of `out`.
void encode_ingest_header(std::span<uint8_t, kIngestHeaderSize> out, const IngestHeader& header,
                          std::span<const uint8_t> payload) noexcept;

}  // namespace eit::acquisition
