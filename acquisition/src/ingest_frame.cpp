// Ingest framing: header parse/encode and payload encoding (see ingest_frame.hpp).
#include "eit/acquisition/ingest_frame.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "eit/acquisition/crc32.hpp"
#include "little_endian.hpp"

namespace eit::acquisition {
namespace {

constexpr size_t kHeaderCrcOffset = 36;

template <typename Int>
Int saturate(double v) noexcept {
  if (!std::isfinite(v))
    return v > 0 ? std::numeric_limits<Int>::max()
                 : (v < 0 ? std::numeric_limits<Int>::min() : Int{0});
  const double r = std::nearbyint(v);
  if (r >= static_cast<double>(std::numeric_limits<Int>::max()))
    return std::numeric_limits<Int>::max();
  if (r <= static_cast<double>(std::numeric_limits<Int>::min()))
    return std::numeric_limits<Int>::min();
  return static_cast<Int>(r);
}

template <typename Int>
bool saturates(double v) noexcept {
  const double r = std::nearbyint(v);
  return !std::isfinite(v) || r > static_cast<double>(std::numeric_limits<Int>::max()) ||
         r < static_cast<double>(std::numeric_limits<Int>::min());
}

}  // namespace

size_t ingest_integer_overflows(IngestSampleType type, std::span<const float> values,
                                double integer_scale) noexcept {
  size_t n = 0;
  for (float v : values) {
    const double scaled = static_cast<double>(v) / integer_scale;
    if (type == IngestSampleType::kI16) n += saturates<int16_t>(scaled);
    if (type == IngestSampleType::kI32) n += saturates<int32_t>(scaled);
  }
  return n;
}

double ingest_integer_limit(IngestSampleType type) noexcept {
  if (type == IngestSampleType::kI16) return std::numeric_limits<int16_t>::max();
  if (type == IngestSampleType::kI32) return std::numeric_limits<int32_t>::max();
  return 0;
}

size_t ingest_sample_size(IngestSampleType type) noexcept {
  switch (type) {
    case IngestSampleType::kF32:
      return 4;
    case IngestSampleType::kF64:
      return 8;
    case IngestSampleType::kI16:
      return 2;
    case IngestSampleType::kI32:
      return 4;
    case IngestSampleType::kComplex64:
      return 8;
  }
  return 0;
}

std::string_view to_string(IngestSampleType type) noexcept {
  switch (type) {
    case IngestSampleType::kF32:
      return "f32";
    case IngestSampleType::kF64:
      return "f64";
    case IngestSampleType::kI16:
      return "i16";
    case IngestSampleType::kI32:
      return "i32";
    case IngestSampleType::kComplex64:
      return "complex64";
  }
  return "unknown";
}

IngestSampleType parse_ingest_sample_type(std::string_view text) {
  for (auto t : {IngestSampleType::kF32, IngestSampleType::kF64, IngestSampleType::kI16,
                 IngestSampleType::kI32, IngestSampleType::kComplex64}) {
    if (text == to_string(t)) return t;
  }
  throw std::invalid_argument("ingest sample type '" + std::string(text) +
                              "' unknown; expected f32, f64, i16, i32 or complex64");
}

std::optional<IngestHeader> parse_ingest_header(std::span<const uint8_t> b) noexcept {
  if (b.size() < kIngestHeaderSize) return std::nullopt;
  if (!std::equal(std::begin(kIngestMagic), std::end(kIngestMagic), b.begin())) return std::nullopt;
  const uint32_t want_crc = le::load<uint32_t>(&b[kHeaderCrcOffset]);
  if (crc32(b.first(kHeaderCrcOffset)) != want_crc) return std::nullopt;
  IngestHeader h;
  h.version = b[4];
  h.sample_type = static_cast<IngestSampleType>(b[5]);
  h.header_len = le::load<uint16_t>(&b[6]);
  h.seq = le::load<uint64_t>(&b[8]);
  h.device_time_ns = le::load<int64_t>(&b[16]);
  h.value_count = le::load<uint32_t>(&b[24]);
  h.flags = le::load<uint16_t>(&b[28]);
  h.payload_crc = le::load<uint32_t>(&b[32]);
  if (h.version < 1 || h.header_len < kIngestHeaderSize || h.header_len > kIngestMaxHeaderLen ||
      ingest_sample_size(h.sample_type) == 0 || h.value_count > kIngestMaxValues) {
    return std::nullopt;
  }
  return h;
}

size_t ingest_frame_size(IngestSampleType type, size_t n_values) noexcept {
  return kIngestHeaderSize + n_values * ingest_sample_size(type);
}

void encode_ingest_header(std::span<uint8_t, kIngestHeaderSize> out, const IngestHeader& h,
                          std::span<const uint8_t> payload) noexcept {
  uint8_t* p = out.data();
  std::copy(std::begin(kIngestMagic), std::end(kIngestMagic), p);
  p[4] = h.version;
  p[5] = static_cast<uint8_t>(h.sample_type);
  le::store<uint16_t>(p + 6, h.header_len);
  le::store<uint64_t>(p + 8, h.seq);
  le::store<int64_t>(p + 16, h.device_time_ns);
  le::store<uint32_t>(p + 24, h.value_count);
  le::store<uint16_t>(p + 28, h.flags);
  le::store<uint16_t>(p + 30, 0);
  le::store<uint32_t>(p + 32, crc32(payload));
  le::store<uint32_t>(p + kHeaderCrcOffset, crc32(out.first(kHeaderCrcOffset)));
}

size_t encode_ingest_frame(std::span<uint8_t> out, IngestSampleType type, uint64_t seq,
                           int64_t device_time_ns, std::span<const float> values,
                           double integer_scale) noexcept {
  const size_t size = ingest_frame_size(type, values.size());
  if (out.size() < size || ingest_sample_size(type) == 0) return 0;
  uint8_t* p = out.data() + kIngestHeaderSize;
  for (float v : values) {
    switch (type) {
      case IngestSampleType::kF32:
        le::store<float>(p, v);
        p += 4;
        break;
      case IngestSampleType::kF64:
        le::store<double>(p, v);
        p += 8;
        break;
      case IngestSampleType::kI16:
        le::store<int16_t>(p, saturate<int16_t>(v / integer_scale));
        p += 2;
        break;
      case IngestSampleType::kI32:
        le::store<int32_t>(p, saturate<int32_t>(v / integer_scale));
        p += 4;
        break;
      case IngestSampleType::kComplex64:
        le::store<float>(p, v);
        le::store<float>(p + 4, 0.0f);
        p += 8;
        break;
    }
  }
  IngestHeader h;
  h.sample_type = type;
  h.seq = seq;
  h.device_time_ns = device_time_ns < 0 ? 0 : device_time_ns;
  h.flags = device_time_ns < 0 ? 0 : kIngestFlagDeviceTime;
  h.value_count = static_cast<uint32_t>(values.size());
  encode_ingest_header(out.first<kIngestHeaderSize>(), h,
                       out.subspan(kIngestHeaderSize, size - kIngestHeaderSize));
  return size;
}

size_t encode_ingest_frame_complex(std::span<uint8_t> out, uint64_t seq, int64_t device_time_ns,
                                   std::span<const float> interleaved) noexcept {
  const size_t n = interleaved.size() / 2;
  const size_t size = ingest_frame_size(IngestSampleType::kComplex64, n);
  if (out.size() < size) return 0;
  uint8_t* p = out.data() + kIngestHeaderSize;
  for (size_t i = 0; i < 2 * n; ++i, p += 4) le::store<float>(p, interleaved[i]);
  IngestHeader h;
  h.sample_type = IngestSampleType::kComplex64;
  h.seq = seq;
  h.device_time_ns = device_time_ns < 0 ? 0 : device_time_ns;
  h.flags = device_time_ns < 0 ? 0 : kIngestFlagDeviceTime;
  h.value_count = static_cast<uint32_t>(n);
  encode_ingest_header(out.first<kIngestHeaderSize>(), h,
                       out.subspan(kIngestHeaderSize, size - kIngestHeaderSize));
  return size;
}

}  // namespace eit::acquisition
