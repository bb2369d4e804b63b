// Ingest framing: wire layout, encode → decode for every sample type, resynchronisation with an
// exact count of skipped bytes, any chunking, and rejection of wrong frames.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "eit/acquisition/crc32.hpp"
#include "eit/acquisition/ingest_decoder.hpp"
#include "eit/acquisition/ingest_frame.hpp"
#include "live_test_support.hpp"

using namespace eit::acquisition;
using eit::test::OwnedSlot;

namespace {

std::vector<uint8_t> frame_bytes(IngestSampleType type, uint64_t seq, int64_t t,
                                 const std::vector<float>& values) {
  std::vector<uint8_t> out(ingest_frame_size(type, values.size()));
  REQUIRE(encode_ingest_frame(out, type, seq, t, values) == out.size());
  return out;
}

void append(std::vector<uint8_t>& to, const std::vector<uint8_t>& more) {
  to.insert(to.end(), more.begin(), more.end());
}
void append(std::vector<uint8_t>& to, std::string_view more) {
  to.insert(to.end(), more.begin(), more.end());
}

struct Decoded {
  std::vector<uint64_t> seqs;
  std::vector<std::vector<float>> values;
  DecoderStats stats;
};

// Feeds `bytes` in chunks cut at `cuts` (ascending offsets) and collects the frames.
Decoded decode_all(IngestDecoder& d, const std::vector<uint8_t>& bytes,
                   const std::vector<size_t>& cuts = {}) {
  Decoded r;
  OwnedSlot s(d.n_values());
  size_t begin = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(bytes.size());
  for (size_t end : ends) {
    std::span<const uint8_t> chunk(bytes.data() + begin, end - begin);
    size_t pos = 0;
    while (pos < chunk.size()) {
      const auto res = d.decode(chunk.subspan(pos), s.slot);
      REQUIRE(res.consumed > 0);
      pos += res.consumed;
      if (res.frame) {
        r.seqs.push_back(s.slot.seq);
        r.values.push_back(s.values);
      }
    }
    begin = end;
  }
  r.stats = d.stats();
  return r;
}

}  // namespace

TEST_CASE("crc32 matches the zlib check value and continues across pieces") {
  const std::string text = "123456789";
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  CHECK(crc32(bytes) == 0xCBF43926u);
  CHECK(crc32(bytes.subspan(4), crc32(bytes.first(4))) == 0xCBF43926u);
  std::vector<uint8_t> big(1000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 7 + 3);
  CHECK(crc32(std::span(big).subspan(13), crc32(std::span(big).first(13))) == crc32(big));
}

TEST_CASE("ingest header has the documented little-endian layout") {
  const std::vector<float> values = {1.0f, -2.5f, 3.25f};
  const auto b = frame_bytes(IngestSampleType::kF32, 0x0102030405060708ull, 1'000'000'123, values);
  REQUIRE(b.size() == 40 + 3 * 4);
  CHECK(std::string(b.begin(), b.begin() + 4) == "EITF");
  CHECK(b[4] == 1);                   // version
  CHECK(b[5] == 1);                   // f32
  CHECK((b[6] | (b[7] << 8)) == 40);  // header length
  CHECK(b[8] == 0x08);                // seq, least significant byte first
  CHECK(b[15] == 0x01);
  int64_t t;
  std::memcpy(&t, &b[16], 8);
  CHECK(t == 1'000'000'123);
  CHECK(b[24] == 3);        // value count
  CHECK((b[28] & 1) == 1);  // device time valid
  uint32_t payload_crc, header_crc;
  std::memcpy(&payload_crc, &b[32], 4);
  std::memcpy(&header_crc, &b[36], 4);
  CHECK(payload_crc == crc32(std::span(b).subspan(40)));
  CHECK(header_crc == crc32(std::span(b).first(36)));
  float v1;
  std::memcpy(&v1, &b[44], 4);
  CHECK(v1 == -2.5f);
  const auto h = parse_ingest_header(b);
  REQUIRE(h);
  CHECK(h->seq == 0x0102030405060708ull);
  CHECK(h->value_count == 3);
  CHECK(h->payload_size() == 12);
}

TEST_CASE("every sample type survives encode then decode with seq and device time") {
  const size_t n = 208;
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i)
    values[i] = static_cast<float>(static_cast<int>(i) * 37 % 2001 - 1000);
  values[5] = 0.1f;  // not an integer: exact in f32/f64/complex64, rounded in i16/i32
  for (auto type : {IngestSampleType::kF32, IngestSampleType::kF64, IngestSampleType::kI16,
                    IngestSampleType::kI32, IngestSampleType::kComplex64}) {
    CAPTURE(to_string(type));
    IngestDecoder d(n);
    const auto bytes = frame_bytes(type, 41, 777, values);
    const auto r = decode_all(d, bytes);
    REQUIRE(r.seqs.size() == 1);
    CHECK(r.seqs[0] == 41);
    const bool integer = type == IngestSampleType::kI16 || type == IngestSampleType::kI32;
    for (size_t i = 0; i < n; ++i) {
      CAPTURE(i);
      CHECK(r.values[0][i] == (integer ? std::nearbyint(values[i]) : values[i]));
    }
    CHECK(r.stats.frames == 1);
    CHECK(r.stats.bad_frames == 0);
    CHECK(r.stats.bytes_skipped == 0);
  }
}

TEST_CASE("device time is delivered when flagged and zero when not") {
  IngestDecoder d(3);
  OwnedSlot s(3);
  const std::vector<float> v = {1, 2, 3};
  auto with = frame_bytes(IngestSampleType::kF32, 1, 123456789, v);
  REQUIRE(d.decode(with, s.slot).frame);
  CHECK(s.slot.device_time_ns == 123456789);
  auto without = frame_bytes(IngestSampleType::kF32, 2, -1, v);
  REQUIRE(d.decode(without, s.slot).frame);
  CHECK(s.slot.device_time_ns == 0);
}

TEST_CASE("complex64 samples give the real part or the imaginary part or the magnitude as chosen") {
  const std::vector<float> interleaved = {3, 4, -6, 8, 0.5f, 0};
  std::vector<uint8_t> bytes(ingest_frame_size(IngestSampleType::kComplex64, 3));
  REQUIRE(encode_ingest_frame_complex(bytes, 9, -1, interleaved) == bytes.size());
  IngestDecoder real(3), imag(3, {.complex_part = ComplexPart::kImag}),
      magnitude(3, {.complex_part = ComplexPart::kMagnitude});
  const auto r = decode_all(real, bytes);
  const auto i = decode_all(imag, bytes);
  const auto m = decode_all(magnitude, bytes);
  REQUIRE(r.values.size() == 1);
  REQUIRE(i.values.size() == 1);
  REQUIRE(m.values.size() == 1);
  CHECK(r.values[0] == std::vector<float>{3, -6, 0.5f});
  CHECK(i.values[0] == std::vector<float>{4, 8, 0});
  CHECK(m.values[0] == std::vector<float>{5, 10, 0.5f});
}

TEST_CASE("integer samples are scaled by integer_scale") {
  IngestDecoder d(2, {.integer_scale = 0.5});
  const auto r = decode_all(d, frame_bytes(IngestSampleType::kI16, 0, -1, {100, -3}));
  REQUIRE(r.values.size() == 1);
  CHECK(r.values[0] == std::vector<float>{50, -1.5f});
}

TEST_CASE("integer samples are encoded as value over the scale and saturations are counted") {
  const std::vector<float> values = {0.01f, -0.02f, 0.0301f, 4.0f};
  std::vector<uint8_t> out(ingest_frame_size(IngestSampleType::kI16, values.size()));
  REQUIRE(encode_ingest_frame(out, IngestSampleType::kI16, 0, -1, values, 1e-4) == out.size());
  IngestDecoder d(values.size(), {.integer_scale = 1e-4});
  const auto r = decode_all(d, out);
  REQUIRE(r.values.size() == 1);
  CHECK(r.values[0][0] == doctest::Approx(0.01).epsilon(1e-6));
  CHECK(r.values[0][1] == doctest::Approx(-0.02).epsilon(1e-6));
  CHECK(r.values[0][2] == doctest::Approx(0.0301).epsilon(1e-6));
  CHECK(r.values[0][3] == doctest::Approx(32767 * 1e-4).epsilon(1e-6));  // 4.0 / 1e-4 saturates
  CHECK(ingest_integer_overflows(IngestSampleType::kI16, values, 1e-4) == 1);
  CHECK(ingest_integer_overflows(IngestSampleType::kI32, values, 1e-4) == 0);
  CHECK(ingest_integer_overflows(IngestSampleType::kF32, values, 1e-4) == 0);
  CHECK(ingest_integer_limit(IngestSampleType::kI16) == 32767);
}

namespace {

// Three frames with garbage before, between and after them, including false starts of the magic
// and a false "EITF" whose header CRC fails. Returns the stream and the garbage byte count.
std::pair<std::vector<uint8_t>, size_t> garbled_stream(size_t n) {
  std::vector<uint8_t> s;
  size_t garbage = 0;
  auto junk = [&](std::string_view j) {
    append(s, j);
    garbage += j.size();
  };
  junk("hello\r\nEI");
  append(s, frame_bytes(IngestSampleType::kF32, 10, -1, eit::test::test_frame(10, n)));
  junk("EITFEITxxEEITF0123456789012345678901234567890123456789");  // false magics, bad CRC
  append(s, frame_bytes(IngestSampleType::kF64, 11, -1, eit::test::test_frame(11, n)));
  junk("E");
  junk("EITF");  // a false start running straight into the next frame
  append(s, frame_bytes(IngestSampleType::kI32, 12, -1, eit::test::test_frame(12, n)));
  junk("trailing EIT");
  return {s, garbage};
}

}  // namespace

TEST_CASE("garbage between frames is skipped and counted to the byte") {
  const size_t n = 8;
  const auto [stream, garbage] = garbled_stream(n);
  IngestDecoder d(n);
  const auto r = decode_all(d, stream);
  CHECK(r.seqs == std::vector<uint64_t>{10, 11, 12});
  CHECK(r.values[0] == eit::test::test_frame(10, n));
  CHECK(r.values[1] == eit::test::test_frame(11, n));
  CHECK(r.stats.bad_frames == 0);
  // "trailing EIT" could still start a frame: the last 3 bytes are held, not yet skipped.
  CHECK(r.stats.bytes_skipped == garbage - 3);
  d.reset();
  CHECK(d.stats().bytes_skipped == garbage - 3);
}

TEST_CASE("a stream split at every byte boundary decodes the same frames and counts") {
  const size_t n = 8;
  const auto [stream, garbage] = garbled_stream(n);
  IngestDecoder whole_decoder(n);
  const auto whole = decode_all(whole_decoder, stream);
  for (size_t cut = 1; cut < stream.size(); ++cut) {
    CAPTURE(cut);
    IngestDecoder d(n);
    const auto r = decode_all(d, stream, {cut});
    CHECK(r.seqs == whole.seqs);
    CHECK(r.values == whole.values);
    CHECK(r.stats.bytes_skipped == whole.stats.bytes_skipped);
  }
  std::vector<size_t> every;
  for (size_t i = 1; i < stream.size(); ++i) every.push_back(i);
  IngestDecoder bytewise(n);
  const auto r = decode_all(bytewise, stream, every);
  CHECK(r.seqs == whole.seqs);
  CHECK(r.values == whole.values);
  CHECK(r.stats.bytes_skipped == whole.stats.bytes_skipped);
}

TEST_CASE("a frame with the wrong value count is rejected, counted, explained and hunted past") {
  IngestDecoder d(208);
  std::vector<uint8_t> s;
  append(s, frame_bytes(IngestSampleType::kF32, 1, -1, eit::test::test_frame(1, 207)));
  append(s, frame_bytes(IngestSampleType::kF32, 2, -1, eit::test::test_frame(2, 208)));
  append(s, frame_bytes(IngestSampleType::kF64, 3, -1, eit::test::test_frame(3, 256)));
  append(s, frame_bytes(IngestSampleType::kF32, 4, -1, eit::test::test_frame(4, 208)));
  const auto r = decode_all(d, s);
  CHECK(r.seqs == std::vector<uint64_t>{2, 4});
  CHECK(r.values[1] == eit::test::test_frame(4, 208));
  CHECK(r.stats.bad_frames == 2);
  // The rejected frames' bytes are garbage to the decoder: every one of them is counted.
  CHECK(r.stats.bytes_skipped == (40 + 207 * 4) + (40 + 256 * 8));
  CHECK(d.last_problem().find("256 values") != std::string::npos);
  CHECK(d.last_problem().find("208") != std::string::npos);
}

TEST_CASE("a forged header claiming 4,194,304 values does not swallow the good frames after it") {
  // Valid magic and header CRC, value_count 2^22 float64 (32 MiB), no payload: the old decoder
  // skipped the next 32 MiB as that frame's payload and lost all 2,000 good frames.
  IngestHeader forged;
  forged.sample_type = IngestSampleType::kF64;
  forged.seq = 99;
  forged.value_count = kIngestMaxValues;
  std::vector<uint8_t> s(kIngestHeaderSize);
  const uint8_t nothing = 0;
  encode_ingest_header(std::span<uint8_t, kIngestHeaderSize>(s.data(), kIngestHeaderSize), forged,
                       std::span<const uint8_t>(&nothing, 0));
  REQUIRE(parse_ingest_header(s).has_value());
  for (uint64_t k = 0; k < 2000; ++k)
    append(s, frame_bytes(IngestSampleType::kF32, 100 + k, -1, eit::test::test_frame(k, 208)));
  IngestDecoder d(208);
  const auto r = decode_all(d, s, {1000, 100000});
  CHECK(r.seqs.size() >= 1998);  // at most a frame or two lost
  CHECK(r.seqs.size() == 2000);  // in fact none: the next header follows the forged one
  CHECK(r.stats.bad_frames == 1);
  CHECK(r.stats.bytes_skipped == kIngestHeaderSize);
  CHECK(d.last_problem().find("4194304 values") != std::string::npos);
}

TEST_CASE("a forged header length is garbage too, not a length to skip") {
  // header_len 65,535 with a valid CRC would skip 64 KiB (75 frames of 208 f32) as header tail.
  auto f = frame_bytes(IngestSampleType::kF32, 1, -1, eit::test::test_frame(1, 208));
  IngestHeader h = *parse_ingest_header(f);
  h.header_len = 65535;
  std::vector<uint8_t> s(kIngestHeaderSize);
  encode_ingest_header(std::span<uint8_t, kIngestHeaderSize>(s.data(), kIngestHeaderSize), h,
                       std::span(f).subspan(40));
  CHECK_FALSE(parse_ingest_header(s).has_value());
  for (uint64_t k = 0; k < 100; ++k)
    append(s, frame_bytes(IngestSampleType::kF32, 2 + k, -1, eit::test::test_frame(k, 208)));
  IngestDecoder d(208);
  const auto r = decode_all(d, s);
  CHECK(r.seqs.size() == 100);
  CHECK(r.stats.bytes_skipped == kIngestHeaderSize);
}

TEST_CASE("a corrupted payload fails its CRC, is counted, and the next frame still decodes") {
  IngestDecoder d(16);
  std::vector<uint8_t> s = frame_bytes(IngestSampleType::kF32, 1, -1, eit::test::test_frame(1, 16));
  s[40 + 5] ^= 0x10;
  append(s, frame_bytes(IngestSampleType::kF32, 2, -1, eit::test::test_frame(2, 16)));
  const auto r = decode_all(d, s);
  CHECK(r.seqs == std::vector<uint64_t>{2});
  CHECK(r.stats.bad_frames == 1);
  CHECK(d.last_problem().find("CRC") != std::string::npos);
}

// Decodes `s` whole, cut once at every offset and byte by byte; all must equal the whole.
Decoded decode_any_split(const std::vector<uint8_t>& s, size_t n) {
  IngestDecoder whole_decoder(n);
  const Decoded whole = decode_all(whole_decoder, s);
  std::vector<size_t> every;
  for (size_t cut = 1; cut < s.size(); ++cut) {
    CAPTURE(cut);
    IngestDecoder d(n);
    const auto r = decode_all(d, s, {cut});
    CHECK(r.seqs == whole.seqs);
    CHECK(r.values == whole.values);
    CHECK(r.stats.bytes_skipped == whole.stats.bytes_skipped);
    every.push_back(cut);
  }
  IngestDecoder bytewise(n);
  const auto r = decode_all(bytewise, s, every);
  CHECK(r.seqs == whole.seqs);
  CHECK(r.values == whole.values);
  CHECK(r.stats.bytes_skipped == whole.stats.bytes_skipped);
  return whole;
}

TEST_CASE("a frame that lost bytes in transit costs only itself, not the frame begun inside it") {
  // Frames 5, 15 and 25 lose 10 payload bytes (a serial overrun): each one's claimed length
  // reaches 10 bytes into the next frame. The old decoder skipped those as payload, failed the
  // CRC and lost the intact next frame as well (15 damaged frames cost 30 in the audit).
  const size_t n = 208;
  std::vector<uint8_t> s;
  std::vector<uint64_t> intact;
  for (uint64_t k = 0; k < 30; ++k) {
    auto f = frame_bytes(IngestSampleType::kF32, k, -1, eit::test::test_frame(k, n));
    if (k % 10 == 5) {
      f.erase(f.begin() + 300, f.begin() + 310);
    } else {
      intact.push_back(k);
    }
    append(s, f);
  }
  const auto r = decode_any_split(s, n);
  CHECK(r.seqs == intact);
  CHECK(r.values.back() == eit::test::test_frame(29, n));
  CHECK(r.stats.bad_frames == 3);
  CHECK(r.stats.bytes_skipped == 3 * (40 + 4 * n - 10));  // the damaged frames, to the byte
}

TEST_CASE("a frame cut short is followed by the next frame, whole") {
  const size_t n = 208;
  std::vector<uint8_t> s = frame_bytes(IngestSampleType::kF32, 1, -1, eit::test::test_frame(1, n));
  s.resize(40 + 400);
  for (uint64_t k = 2; k < 5; ++k)
    append(s, frame_bytes(IngestSampleType::kF32, k, -1, eit::test::test_frame(k, n)));
  const auto r = decode_any_split(s, n);
  CHECK(r.seqs == std::vector<uint64_t>{2, 3, 4});
  CHECK(r.stats.bad_frames == 1);
  CHECK(r.stats.bytes_skipped == 40 + 400);
}

TEST_CASE("several whole frames inside a damaged frame's length all decode, in order") {
  // A header promising a 256-byte header and 8 float64 values (320 bytes to come), then only
  // i16 frames of 56 bytes: five of them lie inside the damaged frame's length.
  const size_t n = 8;
  IngestHeader h;
  h.sample_type = IngestSampleType::kF64;
  h.header_len = kIngestMaxHeaderLen;
  h.seq = 100;
  h.value_count = n;
  std::vector<uint8_t> s(kIngestHeaderSize);
  const std::vector<uint8_t> lost_payload(n * 8, 0x5A);
  encode_ingest_header(std::span<uint8_t, kIngestHeaderSize>(s.data(), kIngestHeaderSize), h,
                       lost_payload);
  for (uint64_t k = 0; k < 8; ++k)
    append(s, frame_bytes(IngestSampleType::kI16, k, -1, eit::test::test_frame(k * 4, n)));
  const auto r = decode_any_split(s, n);
  CHECK(r.seqs == std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(r.stats.bad_frames == 1);
  CHECK(r.stats.bytes_skipped == kIngestHeaderSize);
}

TEST_CASE("a later version with a longer header is read by its version-1 fields") {
  const std::vector<float> v = eit::test::test_frame(5, 4);
  auto f = frame_bytes(IngestSampleType::kF32, 5, -1, v);
  IngestHeader h = *parse_ingest_header(f);
  h.version = 2;
  h.header_len = 48;
  std::vector<uint8_t> s(48, 0xAB);  // 8 bytes of header extension
  encode_ingest_header(std::span<uint8_t, kIngestHeaderSize>(s.data(), kIngestHeaderSize), h,
                       std::span(f).subspan(40));
  s.insert(s.end(), f.begin() + 40, f.end());
  IngestDecoder d(4);
  const auto r = decode_all(d, s);
  REQUIRE(r.seqs == std::vector<uint64_t>{5});
  CHECK(r.values[0] == v);
  CHECK(r.stats.bytes_skipped == 0);
}

TEST_CASE("encode refuses a buffer that is too small and integers saturate") {
  std::vector<uint8_t> small(ingest_frame_size(IngestSampleType::kF32, 4) - 1);
  CHECK(encode_ingest_frame(small, IngestSampleType::kF32, 0, -1, std::vector<float>(4)) == 0);
  IngestDecoder d(3);
  const auto r = decode_all(d, frame_bytes(IngestSampleType::kI16, 0, -1, {1e6f, -1e6f, 12.6f}));
  REQUIRE(r.values.size() == 1);
  CHECK(r.values[0] == std::vector<float>{32767, -32768, 13});
}

TEST_CASE("sample type names parse and unknown ones are refused with the choices") {
  CHECK(parse_ingest_sample_type("complex64") == IngestSampleType::kComplex64);
  CHECK_THROWS_WITH_AS(parse_ingest_sample_type("f16"),
                       doctest::Contains("expected f32, f64, i16, i32 or complex64"),
                       std::invalid_argument);
  CHECK_THROWS_AS(IngestDecoder(0), std::invalid_argument);
}

TEST_CASE("the example frame in docs/protocol.md encodes to the documented bytes") {
  // Bytes computed independently with Python's struct and zlib.crc32 (see docs/protocol.md).
  const std::vector<uint8_t> documented = {
      0x45, 0x49, 0x54, 0x46, 0x01, 0x01, 0x28, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x2f, 0x68, 0x59, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00,
      0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x48, 0xda, 0x2d, 0x04, 0x60, 0x09, 0xb1,
      0xb1, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xbf, 0x00, 0x00, 0x80, 0x3e};
  CHECK(frame_bytes(IngestSampleType::kF32, 42, 1'500'000'000, {1.0f, -0.5f, 0.25f}) == documented);
  IngestDecoder d(3);
  const auto r = decode_all(d, documented);
  REQUIRE(r.seqs == std::vector<uint64_t>{42});
  CHECK(r.values[0] == std::vector<float>{1.0f, -0.5f, 0.25f});
}
