// `eitstream emulate` against open_live_source, end to end on loopback with ephemeral ports and
// a pty: every frame arrives, in order, with the values of the recording; a device killed and
// restarted mid-stream is reconnected and the gap reported.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "../acquisition/live_test_support.hpp"
#include "cli_run.hpp"
#include "eit/acquisition/live_source.hpp"
#include "eit/acquisition/recording_reader.hpp"
#include "emulate_process.hpp"
#include "raw_test_recording.hpp"
#include "test_data.hpp"

using namespace eit::acquisition;
using eit::test::EmulateProcess;
using eit::test::read_frames;
using eit::test::test_frame;

namespace {

constexpr size_t kN = 208;
constexpr size_t kFrames = 40;

std::string raw_recording() {
  static const eit::test::RawTestRecording recording("eitstream_emulate", kFrames, kN);
  return recording.path();
}

std::vector<std::string> raw_args(std::vector<std::string> more) {
  std::vector<std::string> a = {"--from",
                                raw_recording(),
                                "--recording-format",
                                "f32",
                                "--values-per-frame",
                                std::to_string(kN),
                                "--wait-s",
                                "30"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

void check_recording_order(const std::vector<eit::test::ReceivedFrame>& got, size_t count,
                           uint64_t first_seq = 0) {
  REQUIRE(got.size() == count);
  for (size_t i = 0; i < count; ++i) {
    CAPTURE(i);
    CHECK(got[i].seq == first_seq + i);
    CHECK(got[i].values == test_frame(i % kFrames, kN));
  }
}

}  // namespace

TEST_CASE("emulate tcp-listen: a tcp client receives the whole recording in order") {
  EmulateProcess emulate(raw_args({"--to", "tcp-listen://127.0.0.1:0", "--fps", "400"}));
  const std::string receiver = emulate.line_after("receiver: ");
  REQUIRE(receiver.rfind("tcp://127.0.0.1:", 0) == 0);
  auto source = open_live_source(receiver, {}, eit::test::adjacent16());
  check_recording_order(read_frames(*source, kFrames), kFrames);
  CHECK(emulate.wait() == 0);
  CHECK(source->stats().seq_gaps == 0);
}

TEST_CASE("emulate tcp: the device connects to a listening eitstream, every frame arrives") {
  auto source = open_live_source("tcp-listen://127.0.0.1:0", {}, eit::test::adjacent16());
  EmulateProcess emulate(
      raw_args({"--to", "tcp://" + source->endpoint(), "--fps", "400", "--sample-type", "f64"}));
  check_recording_order(read_frames(*source, kFrames), kFrames);
  CHECK(emulate.wait() == 0);
}

TEST_CASE("emulate udp: every frame arrives, in order, several frames per datagram") {
  auto source = open_live_source("udp://127.0.0.1:0", {}, eit::test::adjacent16());
  EmulateProcess emulate(raw_args({"--to", "udp://" + source->endpoint(), "--fps", "400",
                                   "--frames-per-datagram", "3", "--seq-start", "7"}));
  check_recording_order(read_frames(*source, kFrames), kFrames, 7);
  CHECK(emulate.wait() == 0);
  CHECK(source->stats().seq_gaps == 0);
  CHECK(source->stats().reordered == 0);
}

TEST_CASE("emulate pty: ingest frames over a pseudo-terminal serial port") {
  EmulateProcess emulate(raw_args({"--to", "pty", "--fps", "400"}));
  const std::string receiver = emulate.line_after("receiver: ");
  REQUIRE(receiver.rfind("serial:///dev/", 0) == 0);
  auto source = open_live_source(receiver, {}, eit::test::adjacent16());
  check_recording_order(read_frames(*source, kFrames), kFrames);
  CHECK(emulate.wait() == 0);
}

TEST_CASE("emulate pty: OpenEIT lines of openeit_simdata.txt at 115200 match the recording") {
  const auto file = eit::test::shared_data_file("recordings/openeit_simdata.txt");
  if (!file) return;
  const auto protocol = eit::recon::make_protocol({.n_electrodes = 32, .drive_distance = 16});
  auto reader = open_recording_reader(*file, {}, protocol);
  const size_t frames = reader->info().n_frames;
  REQUIRE(frames == 11);
  EmulateProcess emulate({"--from", file->string(), "--to", "pty", "--format", "openeit",
                          "--electrodes", "32", "--fps", "50"});
  const std::string receiver = emulate.line_after("receiver: ");
  REQUIRE(receiver.find("format=openeit") != std::string::npos);
  auto source = open_live_source(receiver + "&baud=115200", {}, protocol);
  const auto got = read_frames(*source, frames);
  REQUIRE(got.size() == frames);
  std::vector<float> want(protocol.n_meas());
  double worst = 0;
  for (size_t k = 0; k < frames; ++k) {
    REQUIRE(reader->read(k, want));
    for (size_t i = 0; i < want.size(); ++i) {
      worst = std::max(worst, std::fabs(double{got[k].values[i]} - want[i]));
    }
  }
  // The firmware's "%8d.%04d" keeps 4 decimals: at most half a unit in the last place, plus float.
  CHECK(worst <= 0.5e-4 + 1e-6);
  MESSAGE("OpenEIT lines over the pty: worst |received - recording| = " << worst);
  CHECK(emulate.wait() == 0);
  CHECK(source->stats().bad_frames == 0);
}

TEST_CASE("emulate killed and restarted mid-stream: the tcp client reconnects, gap reported") {
  auto first = std::make_unique<EmulateProcess>(
      raw_args({"--to", "tcp-listen://127.0.0.1:0", "--fps", "200", "--loop"}));
  const std::string endpoint = first->line_after("endpoint: ");
  REQUIRE(!endpoint.empty());
  auto source = open_live_source("tcp://" + endpoint, {}, eit::test::adjacent16());
  const auto before = read_frames(*source, 20);
  check_recording_order(before, 20);
  first->kill(SIGKILL);
  first->wait();
  first.reset();
  EmulateProcess second(raw_args(
      {"--to", "tcp-listen://" + endpoint, "--fps", "200", "--loop", "--seq-start", "1000"}));
  REQUIRE(second.line_after("endpoint: ") == endpoint);
  // Frames still in flight from the first device arrive first, then the restarted one's.
  std::vector<eit::test::ReceivedFrame> after;
  uint64_t last_before = before.back().seq;
  for (int tries = 0; tries < 200 && (after.empty() || after.back().seq < 1010); ++tries) {
    for (auto& f : read_frames(*source, 1, std::chrono::milliseconds(200))) {
      if (f.seq < 1000) {
        last_before = f.seq;
      } else {
        after.push_back(std::move(f));
      }
    }
  }
  REQUIRE(after.size() >= 11);
  CHECK(after[0].seq == 1000);
  CHECK((after[0].flags & eit::pipeline::kFlagGapBefore) != 0);
  for (size_t i = 0; i < after.size(); ++i) {
    CHECK(after[i].seq == 1000 + i);
    CHECK(after[i].values == test_frame(i % kFrames, kN));
  }
  const auto st = source->stats();
  CHECK(st.reconnects == 1);
  CHECK(st.seq_gaps == 1000 - (last_before + 1));
  CHECK(st.last_error.find("reconnected") != std::string::npos);
  MESSAGE("after the restart: " << st.last_error);
}

TEST_CASE("emulate synthetic: the FEM phantom streams over udp, seq consecutive, values finite") {
  auto source = open_live_source("udp://127.0.0.1:0", {}, eit::test::adjacent16());
  EmulateProcess emulate({"--from", "synthetic", "--to", "udp://" + source->endpoint(), "--fps",
                          "200", "--count", "30"});
  const auto got = read_frames(*source, 30);
  REQUIRE(got.size() == 30);
  for (size_t k = 0; k < got.size(); ++k) {
    CHECK(got[k].seq == k);
    for (float v : got[k].values) CHECK(std::isfinite(v));
  }
  CHECK(got[0].values != got[29].values);  // the anomaly moves
  CHECK(emulate.wait() == 0);
}

TEST_CASE("emulate refuses bad options with a message naming them") {
  EmulateProcess bad({"--from", raw_recording(), "--recording-format", "f32", "--values-per-frame",
                      "208", "--to", "carrier-pigeon://x"});
  CHECK(bad.wait() != 0);
  EmulateProcess bad_format({"--from", "synthetic", "--format", "morse"});
  CHECK(bad_format.wait() != 0);
}

TEST_CASE("emulate --to with an unknown scheme lists the schemes a device link takes") {
  const auto r =
      eit::test::run_eitstream("emulate --from synthetic --count 1 --to carrier-pigeon://x");
  CAPTURE(r.output);
  CHECK(r.code == 1);
  CHECK(eit::test::contains(r.output,
                            "device link 'carrier-pigeon://x': scheme 'carrier-pigeon' unknown; "
                            "expected one of tcp-listen://, tcp://, tls-listen://, tls-connect://, "
                            "udp://, file://, pty, nats://"));
  CHECK_FALSE(eit::test::contains(r.output, "serial://"));  // a source's, it cannot send
}

TEST_CASE("--complex refuses abs naming the parts it takes") {
  const auto r = eit::test::run_eitstream(
      "emulate --from synthetic --complex abs --count 1 --to udp://127.0.0.1:9");
  CAPTURE(r.output);
  CHECK(r.code == 1);
  CHECK(eit::test::contains(r.output,
                            "--complex 'abs': expected real, imag, magnitude or interleaved"));
}

TEST_CASE("emulate refuses a bad --to before it builds the phantom") {
  // The start line ("emulate: synthetic phantom …: 208 values per frame …") comes once the
  // phantom is built, seconds in; the refusal of the link's URI must come before it.
  const struct {
    std::string to, said;
  } cases[] = {
      {"'tcp-listen://127.0.0.1:0?idle=5'",
       "device link 'tcp-listen://127.0.0.1:0?idle=5': option 'idle' unknown; tcp-listen:// "
       "takes no options"},
      {"serial:///dev/ttyS0", "scheme 'serial' cannot send"},
      {"'nats://127.0.0.1:1?site=icu&bogus=1'", "nats://127.0.0.1:1?site=icu&bogus=1"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.to);
    const auto r = eit::test::run_eitstream("emulate --from synthetic --count 1 --to " + c.to);
    CAPTURE(r.output);
    CHECK(r.code == 1);
    CHECK(eit::test::contains(r.output, c.said));
    CHECK_FALSE(eit::test::contains(r.output, "values per frame"));
  }
}
