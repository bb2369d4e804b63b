#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "eit/acquisition/replay_source.hpp"
#include "eit/pipeline/frame.hpp"
#include "eit/recon/protocol.hpp"
#include "temp_files.hpp"
#include "test_data.hpp"

using namespace eit::acquisition;
using namespace std::chrono_literals;
using eit::pipeline::FrameSlot;
using eit::pipeline::Stage;

namespace {

const eit::recon::Protocol& adjacent16() {
  static const eit::recon::Protocol p = eit::recon::make_protocol({});
  return p;
}

// n frames of 208 float32, value i of frame f = f·1000 + i.
std::string raw_frames(int n) {
  std::string s;
  for (int f = 0; f < n; ++f)
    for (int i = 0; i < 208; ++i) eit::test::append<float>(s, float(f * 1000 + i));
  return s;
}

ReplayOptions raw_options() {
  ReplayOptions o;
  o.recording.values_per_frame = 208;
  return o;
}

struct Slot {
  std::vector<float> values = std::vector<float>(208);
  FrameSlot slot;
  Slot() { slot.values = values.data(); }
};

}  // namespace

TEST_CASE("unpaced replay delivers every frame in order, then reports the end") {
  eit::test::TempDir tmp;
  ReplayOptions o = raw_options();
  o.unpaced = true;
  auto src = open_replay(tmp.write("a.f32", raw_frames(5)), o, adjacent16());
  CHECK(src->n_values() == 208);
  CHECK(src->nominal_rate_hz() == 0.0);
  Slot s;
  for (int f = 0; f < 5; ++f) {
    REQUIRE(src->read(s.slot, 100ms) == eit::pipeline::ReadStatus::kFrame);
    CHECK(s.slot.seq == uint64_t(f));
    CHECK(s.values[3] == float(f * 1000 + 3));
    CHECK(s.slot.stamp(Stage::kScheduled) == s.slot.stamp(Stage::kReceived));
  }
  CHECK(src->read(s.slot, 10ms) == eit::pipeline::ReadStatus::kEnd);
  CHECK(src->stats().frames == 5);
  CHECK(src->progress().frame_in_file == 5);
  CHECK(src->progress().frames_in_file == 5);
}

TEST_CASE("paced replay stamps the open-loop schedule start + i/(rate·speed)") {
  eit::test::TempDir tmp;
  ReplayOptions o = raw_options();
  o.fps = 500.0;
  o.speed = 2.0;  // 1000 frames/s: 1 ms apart
  auto src = open_replay(tmp.write("a.f32", raw_frames(4)), o, adjacent16());
  CHECK(src->nominal_rate_hz() == 1000.0);
  CHECK(src->recorded_rate_hz() == 500.0);
  Slot s;
  std::vector<int64_t> scheduled;
  for (int f = 0; f < 4; ++f) {
    REQUIRE(src->read(s.slot, 1000ms) == eit::pipeline::ReadStatus::kFrame);
    scheduled.push_back(s.slot.stamp(Stage::kScheduled));
    CHECK(s.slot.stamp(Stage::kReceived) >= s.slot.stamp(Stage::kScheduled));
    CHECK(s.slot.device_time_ns == int64_t(f) * 2'000'000);  // the recording's own clock
    if (f == 1) std::this_thread::sleep_for(5ms);  // a late consumer does not shift the schedule
  }
  for (int f = 1; f < 4; ++f) CHECK(scheduled[f] - scheduled[0] == int64_t(f) * 1'000'000);
}

TEST_CASE("replay loops with seq still counting, and a frame due later than the timeout waits") {
  eit::test::TempDir tmp;
  ReplayOptions o = raw_options();
  o.unpaced = true;
  o.loop = true;
  auto src = open_replay(tmp.write("a.f32", raw_frames(3)), o, adjacent16());
  Slot s;
  for (int k = 0; k < 7; ++k) {
    REQUIRE(src->read(s.slot, 100ms) == eit::pipeline::ReadStatus::kFrame);
    CHECK(s.slot.seq == uint64_t(k));
    CHECK(s.values[0] == float((k % 3) * 1000));
  }
  CHECK(src->progress().loops == 2);

  ReplayOptions slow = raw_options();
  slow.fps = 0.5;  // frame 1 is due 2 s after frame 0
  auto paced = open_replay(tmp.path() / "a.f32", slow, adjacent16());
  REQUIRE(paced->read(s.slot, 100ms) == eit::pipeline::ReadStatus::kFrame);
  CHECK(paced->read(s.slot, 1ms) == eit::pipeline::ReadStatus::kTimeout);
}

TEST_CASE("stop() ends a read waiting for a frame's time") {
  eit::test::TempDir tmp;
  ReplayOptions o = raw_options();
  o.fps = 0.1;  // 10 s between frames
  auto src = open_replay(tmp.write("a.f32", raw_frames(2)), o, adjacent16());
  Slot s;
  REQUIRE(src->read(s.slot, 100ms) == eit::pipeline::ReadStatus::kFrame);
  std::thread stopper([&] {
    std::this_thread::sleep_for(20ms);
    src->stop();
  });
  CHECK(src->read(s.slot, 60'000ms) == eit::pipeline::ReadStatus::kStopped);
  stopper.join();
}

TEST_CASE("pacing without a known rate is a set-up error that names the file and --fps") {
  eit::test::TempDir tmp;
  CHECK_THROWS_WITH(
      open_replay(tmp.write("norate.f32", raw_frames(2)), raw_options(), adjacent16()),
      doctest::Contains("norate.f32: the file gives no frame rate; give --fps"));
  ReplayOptions o = raw_options();
  o.fps = 10;
  o.speed = 0;
  CHECK_THROWS_WITH(open_replay(tmp.path() / "norate.f32", o, adjacent16()),
                    doctest::Contains("--speed"));
}

TEST_CASE("a bad frame in a replay leaves a seq gap, flags the next frame and is counted") {
  eit::test::TempDir tmp;
  std::string csv;
  // Halves: a first row of 0, 1, …, 207 would be taken for pandas' column-number header.
  for (int row = 0; row < 3; ++row) {
    for (int i = 0; i < 208; ++i)
      csv += (row == 1 && i == 9) ? "x," : fmt::format("{},", 0.5 * (row + i));
    csv += "\n";
  }
  ReplayOptions o;
  o.unpaced = true;
  auto src = open_replay(tmp.write("gap.csv", csv), o, adjacent16());
  Slot s;
  REQUIRE(src->read(s.slot, 100ms) == eit::pipeline::ReadStatus::kFrame);
  CHECK(s.slot.seq == 0);
  s.slot.flags = 0;
  REQUIRE(src->read(s.slot, 100ms) == eit::pipeline::ReadStatus::kFrame);
  CHECK(s.slot.seq == 2);
  CHECK((s.slot.flags & eit::pipeline::kFlagGapBefore) != 0);
  CHECK(src->stats().bad_frames == 1);
  CHECK(src->stats().last_error.find(
            "gap.csv: 1 frame(s) could not be decoded, the last at frame 2") != std::string::npos);
}

TEST_CASE("a stream decoder replays a captured OpenEIT log, last unterminated line included") {
  eit::recon::ProtocolOptions po;
  po.n_electrodes = 8;
  po.drive_distance = 4;
  const auto model = eit::recon::make_protocol(po);
  std::string log;
  for (int f = 0; f < 4; ++f) {
    log += "magnitudes: ";
    for (int i = 0; i < 32; ++i) log += fmt::format("{:8d}.{:04d},", f, i);
    if (f < 3) log += "\r\n";
  }
  eit::test::TempDir tmp;
  ReplayOptions o;
  o.recording.format = "openeit-stream";
  o.unpaced = true;
  o.loop = true;
  auto src = open_replay(tmp.write("capture.log", log), o, model);
  Slot s;
  for (int k = 0; k < 8; ++k) {
    REQUIRE(src->read(s.slot, 100ms) == eit::pipeline::ReadStatus::kFrame);
    CHECK(s.values[0] == doctest::Approx(float(k % 4)));
  }
  CHECK(src->progress().loops == 1);
  CHECK(src->progress().bytes_total == log.size());
}

TEST_CASE("replaying the Dräger file delivers 59 frames and says the 60th was truncated") {
  const auto path = eit::test::shared_data_file("recordings/draeger_ID_SC_10_60.eit");
  if (!path) return;
  ReplayOptions o;
  o.unpaced = true;
  auto src = open_recording(*path, o, adjacent16());
  CHECK(src->describe() ==
        "replay draeger_ID_SC_10_60.eit (Dräger .eit v51, 59 frames, recorded at 20 Hz, as fast as "
        "possible)");
  Slot s;
  int frames = 0;
  while (src->read(s.slot, 100ms) == eit::pipeline::ReadStatus::kFrame) ++frames;
  CHECK(frames == 59);
  // A set-up finding, said once by whoever opened it; not a problem while playing.
  const auto* replay = dynamic_cast<const ReplaySource*>(src.get());
  REQUIRE(replay != nullptr);
  REQUIRE(!replay->warnings().empty());
  CHECK(replay->warnings().back().find("frame 60 is truncated") != std::string::npos);
  CHECK(src->stats().last_error.empty());
}

TEST_CASE("a looped replay of a file in which no frame decodes ends instead of spinning") {
  eit::test::TempDir tmp;
  // A raw stream shorter than one frame, and a CSV whose every row is bad: each pass gives no
  // frame, and the old replay rewound forever (a core at 100 %, 265 MB counted skipped in 8 s).
  ReplayOptions o;
  o.unpaced = true;
  o.loop = true;
  o.recording.format = "f32-stream";
  o.recording.values_per_frame = 208;
  auto stream = open_replay(tmp.write("short.f32", std::string(100, '\0')), o, adjacent16());
  o.recording = {};
  std::string csv;
  for (int row = 0; row < 4; ++row) {  // the first is taken for a header, the rest are bad
    for (int i = 0; i < 207; ++i) csv += "1,";
    csv += "x\n";
  }
  o.recording.values_per_frame = 208;
  auto rows = open_replay(tmp.write("bad.csv", csv), o, adjacent16());
  for (auto* src : {stream.get(), rows.get()}) {
    Slot s;
    auto status = eit::pipeline::ReadStatus::kTimeout;
    for (int i = 0; i < 50 && status != eit::pipeline::ReadStatus::kEnd; ++i) {
      status = src->read(s.slot, 100ms);
      CHECK(status != eit::pipeline::ReadStatus::kFrame);
    }
    CHECK(status == eit::pipeline::ReadStatus::kEnd);
  }
}
