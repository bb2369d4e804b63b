#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/acquisition/openeit_line_decoder.hpp"
#include "eit/acquisition/raw_frame_decoder.hpp"
#include "eit/pipeline/frame.hpp"
#include "eit/recon/protocol.hpp"
#include "temp_files.hpp"

using namespace eit::acquisition;
using eit::pipeline::FrameSlot;

namespace {

eit::recon::Protocol openeit8() {
  eit::recon::ProtocolOptions o;
  o.n_electrodes = 8;
  o.drive_distance = 4;
  return eit::recon::make_protocol(o);
}

std::string firmware_line(int base) {
  std::string s = "magnitudes: ";
  for (int i = 0; i < 32; ++i) s += fmt::format("{:8d}.{:04d},", base + i, 5);
  return s + "\r\n";
}

struct Collector {
  std::vector<float> values;
  FrameSlot slot;
  std::vector<std::vector<float>> frames;
  explicit Collector(size_t n) : values(n) { slot.values = values.data(); }
  // Feeds `bytes` in chunks of `chunk` bytes, collecting every frame.
  void feed(StreamDecoder& d, std::string_view bytes, size_t chunk) {
    for (size_t at = 0; at < bytes.size(); at += chunk) {
      std::span<const uint8_t> in(reinterpret_cast<const uint8_t*>(bytes.data()) + at,
                                  std::min(chunk, bytes.size() - at));
      while (!in.empty()) {
        const DecodeResult r = d.decode(in, slot);
        REQUIRE(r.consumed > 0);
        in = in.subspan(r.consumed);
        if (r.frame) frames.push_back(values);
      }
    }
  }
};

}  // namespace

TEST_CASE("OpenEIT line decoder gives the same frames for any chunking of the firmware stream") {
  const auto model = openeit8();
  const std::string stream = firmware_line(100) + firmware_line(200) + firmware_line(300);
  for (size_t chunk : {size_t(1), size_t(7), size_t(64), stream.size()}) {
    OpenEitLineDecoder d(model);
    Collector c(d.n_values());
    c.feed(d, stream, chunk);
    REQUIRE(c.frames.size() == 3);
    CHECK(c.frames[0][0] == doctest::Approx(100.0005));
    CHECK(c.frames[2][31] == doctest::Approx(331.0005));
    CHECK(d.stats().frames == 3);
    CHECK(d.stats().bad_frames == 0);
    CHECK(c.slot.seq == 2);
  }
}

TEST_CASE("OpenEIT line decoder counts bad tokens and too-long lines and keeps the good frames") {
  const auto model = openeit8();
  DeviceLayout layout;
  layout.n_electrodes = 8;
  layout.drive_distance = 4;
  OpenEitLineDecoder d(layout, model, 600);  // room for a firmware line (≈ 470 bytes), not more
  Collector c(d.n_values());
  std::string bad = firmware_line(0);
  bad.replace(bad.find("3.0005"), 6, "3.0x05");
  const std::string too_long = "magnitudes: " + std::string(2000, '1') + "\n";
  const std::string stream = firmware_line(10) + bad + "debug: adc ok\r\n" + too_long +
                             firmware_line(20) + "magnitudes: 1,2,3\n" + firmware_line(30);
  c.feed(d, stream, 100);
  REQUIRE(c.frames.size() == 3);
  CHECK(c.frames[0][0] == doctest::Approx(10.0005));
  CHECK(c.frames[1][0] == doctest::Approx(20.0005));
  CHECK(c.frames[2][0] == doctest::Approx(30.0005));
  CHECK(d.stats().bad_frames == 3);  // bad token, too long, too few values
  CHECK(d.too_long_lines() == 1);
  CHECK(d.stats().bytes_skipped == std::string("debug: adc ok\r\n").size() + too_long.size());
}

TEST_CASE("OpenEIT line decoder completes an unterminated last line on flush") {
  const auto model = openeit8();
  OpenEitLineDecoder d(model);
  Collector c(d.n_values());
  std::string last = firmware_line(7);
  last.resize(last.size() - 2);  // no "\r\n"
  c.feed(d, last, 50);
  CHECK(c.frames.empty());
  CHECK(d.flush(c.slot));
  CHECK(c.values[0] == doctest::Approx(7.0005));
  CHECK_FALSE(d.flush(c.slot));  // nothing left
  // reset() drops a partial line; the next line decodes on its own.
  c.feed(d, last.substr(0, 100), 100);
  d.reset();
  c.feed(d, firmware_line(8), 1000);
  REQUIRE(c.frames.size() == 1);
  CHECK(c.frames[0][0] == doctest::Approx(8.0005));
}

TEST_CASE("raw float32 frame decoder splits a stream into frames and drops a partial tail") {
  const auto model = eit::recon::make_protocol({});
  DeviceLayout layout;  // the model's own 208, std order
  RawFrameDecoder d(layout, model, SampleType::kFloat32);
  CHECK(d.frame_bytes() == 208 * 4);
  std::string bytes;
  for (int f = 0; f < 3; ++f)
    for (int i = 0; i < 208; ++i) eit::test::append<float>(bytes, float(f * 1000 + i));
  bytes += std::string(10, '\x01');
  Collector c(d.n_values());
  c.feed(d, bytes, 333);
  REQUIRE(c.frames.size() == 3);
  CHECK(c.frames[1][5] == 1005.0f);
  CHECK(c.frames[2][207] == 2207.0f);
  CHECK_FALSE(d.flush(c.slot));
  CHECK(d.stats().bytes_skipped == 10);
  CHECK(d.stats().bad_frames == 1);
}

TEST_CASE("raw float64 frame decoder maps a full 16x16 table onto the model") {
  const auto model = eit::recon::make_protocol({});
  DeviceLayout layout;
  layout.full_table = true;
  RawFrameDecoder d(layout, model, SampleType::kFloat64);
  std::string bytes;
  for (int i = 0; i < 256; ++i) eit::test::append<double>(bytes, double(i));
  Collector c(d.n_values());
  c.feed(d, bytes, bytes.size());
  REQUIRE(c.frames.size() == 1);
  CHECK(c.frames[0][0] == 2.0f);    // drive 0, m = 2
  CHECK(c.frames[0][13] == 19.0f);  // drive 1, m = 3
}
