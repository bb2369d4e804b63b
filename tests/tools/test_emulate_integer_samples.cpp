// `eitstream emulate --sample-type i16|i32` scales the values into the integer range and prints
// the receiver URI with the matching scale=, so that run's ingest decoder gets them back within
// the quantisation error (half the scale). The old emulate rounded the raw values to integers:
// the synthetic phantom's voltages (about 1e-3 to 0.1) all arrived as 0, and 180 of 208 values of
// a Goe-MF recording.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../acquisition/live_test_support.hpp"
#include "eit/acquisition/live_source.hpp"
#include "eit/acquisition/recording_reader.hpp"
#include "emulate_process.hpp"
#include "raw_test_recording.hpp"
#include "subprocess.hpp"
#include "test_data.hpp"

using namespace eit::acquisition;
using eit::test::EmulateProcess;
using eit::test::read_frames;
using namespace std::chrono_literals;

namespace {

constexpr size_t kN = 208;

// The scale= of a receiver URI (0 when it has none).
double scale_of(const std::string& receiver) {
  const auto at = receiver.find("scale=");
  return at == std::string::npos ? 0.0 : std::stod(receiver.substr(at + 6));
}

// Frames emulate sends with `args` over tcp-listen, as run's ingest decoder reads them, and the
// scale the receiver URI carried.
std::vector<std::vector<float>> received(std::vector<std::string> args, size_t frames,
                                         const eit::recon::Protocol& protocol, double& scale) {
  args.insert(args.end(), {"--to", "tcp-listen://127.0.0.1:0", "--count", std::to_string(frames),
                           "--unpaced", "--wait-s", "60"});
  EmulateProcess emulate(args);
  const std::string receiver = emulate.line_after("receiver: ", 60s);
  REQUIRE_FALSE(receiver.empty());
  scale = scale_of(receiver);
  auto source = open_live_source(receiver, {}, protocol);
  const auto got = read_frames(*source, frames, 30s);
  REQUIRE(got.size() == frames);
  CHECK(emulate.wait() == 0);
  std::vector<std::vector<float>> values;
  for (const auto& f : got) values.push_back(f.values);
  return values;
}

// The largest |got − want| over all frames, and whether every value is within half a step.
double worst_error(const std::vector<std::vector<float>>& got,
                   const std::vector<std::vector<float>>& want, double scale) {
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (size_t k = 0; k < got.size(); ++k)
    for (size_t i = 0; i < got[k].size(); ++i) {
      const double e = std::fabs(double{got[k][i]} - want[k][i]);
      worst = std::max(worst, e);
      // Half a quantisation step, plus float rounding of the value itself.
      if (e > scale / 2 * (1 + 1e-6) + 1e-6 * std::fabs(want[k][i])) {
        CAPTURE(k);
        CAPTURE(i);
        CHECK(got[k][i] == doctest::Approx(want[k][i]));
      }
    }
  return worst;
}

}  // namespace

TEST_CASE("i16 and i32 samples of the synthetic phantom arrive within half a quantisation step") {
  const auto protocol = eit::test::adjacent16();
  const std::vector<std::string> phantom = {"--from", "synthetic", "--h0", "0.2"};
  double none = 0;
  const auto want = received(phantom, 20, protocol, none);  // f32: exact
  CHECK(none == 0);
  for (const char* type : {"i16", "i32"}) {
    CAPTURE(type);
    auto args = phantom;
    args.insert(args.end(), {"--sample-type", type});
    double scale = 0;
    const auto got = received(args, 20, protocol, scale);
    REQUIRE(scale > 0);
    const double worst = worst_error(got, want, scale);
    MESSAGE(std::string(type) << ": scale " << scale << ", worst |received − sent| " << worst);
    size_t zeros = 0;
    for (const auto& f : got) zeros += static_cast<size_t>(std::count(f.begin(), f.end(), 0.0f));
    CHECK(zeros == 0);
  }
}

TEST_CASE("i16 samples of a Goe-MF recording arrive within half a quantisation step") {
  const auto file = eit::test::shared_data_file("recordings/P04P-1016.get");
  if (!file) return;
  const auto protocol = eit::test::adjacent16();
  auto reader = open_recording_reader(*file, {}, protocol);
  constexpr size_t kFrames = 50;
  std::vector<std::vector<float>> want(kFrames, std::vector<float>(protocol.n_meas()));
  for (size_t k = 0; k < kFrames; ++k) REQUIRE(reader->read(k, want[k]));
  double scale = 0;
  const auto got =
      received({"--from", file->string(), "--sample-type", "i16"}, kFrames, protocol, scale);
  REQUIRE(scale > 0);
  MESSAGE("Goe-MF as i16: scale " << scale << ", worst " << worst_error(got, want, scale));
}

TEST_CASE("--scale sets the integer scale and a first frame that would clip at it is refused") {
  const eit::test::RawTestRecording recording("emulate_integer", 40, kN);  // |values| up to 64.25
  const std::vector<std::string> raw = {"--from", recording.path(),     "--recording-format",
                                        "f32",    "--values-per-frame", std::to_string(kN)};
  auto args = raw;
  args.insert(args.end(), {"--sample-type", "i32", "--scale", "0.25"});
  double scale = 0;
  const auto got = received(args, 40, eit::test::adjacent16(), scale);
  CHECK(scale == 0.25);
  std::vector<std::vector<float>> want;
  for (size_t k = 0; k < 40; ++k) want.push_back(eit::test::test_frame(k, kN));
  CHECK(worst_error(got, want, scale) == 0);  // multiples of 0.25: exact

  eit::test::Subprocess refused({EITSTREAM_BIN, "emulate", "--from", recording.path(),
                                 "--recording-format", "f32", "--values-per-frame",
                                 std::to_string(kN), "--sample-type", "i16", "--scale", "0.001",
                                 "--to", "udp://127.0.0.1:9", "--count", "1"});
  CHECK(refused.wait(60s) == 1);
  CHECK(refused.err().find("--scale 0.001: 48 values of the first frame (up to 44.75) would "
                           "clip as i16") != std::string::npos);
}

TEST_CASE("values a later frame takes out of the integer range are clipped, warned and counted") {
  const eit::test::RawTestRecording recording("emulate_clip", 40, kN);
  // At 0.0015 the first frame's 44.75 fits an i16 (29833), the last's 64.25 does not (42833).
  eit::test::Subprocess emulate({EITSTREAM_BIN, "emulate", "--from", recording.path(),
                                 "--recording-format", "f32", "--values-per-frame",
                                 std::to_string(kN), "--sample-type", "i16", "--scale", "0.0015",
                                 "--to", "udp://127.0.0.1:9", "--unpaced"});
  REQUIRE(emulate.wait(60s) == 0);
  CAPTURE(emulate.err());
  CAPTURE(emulate.out());
  CHECK(emulate.err().find("emulate: warning: frame seq ") != std::string::npos);
  CHECK(emulate.out().find("values clipped (out of the i16 range at scale=0.0015)") !=
        std::string::npos);
}
