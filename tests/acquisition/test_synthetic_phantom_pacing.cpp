// The paced synthetic phantom: frames made before they are due, never delivered early, the same
// values whether the source sleeps or spins until the due time, spinning the whole wait never
// sleeps, and stop() ends a spin.
#include <doctest/doctest.h>

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/pipeline/frame.hpp"

namespace {

using eit::acquisition::PhantomOptions;
using eit::acquisition::PhantomTable;
using eit::acquisition::SyntheticPhantomSource;
using eit::pipeline::ReadStatus;
using eit::pipeline::Stage;

PhantomTable small_table() {
  PhantomTable t;
  t.frames = Eigen::MatrixXd(3, 5);
  t.frames << 1, 2, 3, 4, 5, 2, 3, 4, 5, 6, 3, 1, 4, 1, 5;
  t.homogeneous = Eigen::VectorXd::Constant(5, 2.0);
  return t;
}

// Reads n frames; each row: the 5 values, then the scheduled and received stamps.
std::vector<std::vector<double>> read_frames(SyntheticPhantomSource& source, int n) {
  std::vector<float> values(5);
  eit::pipeline::FrameSlot slot;
  slot.values = values.data();
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < n; ++i) {
    REQUIRE(source.read(slot, std::chrono::milliseconds(1000)) == ReadStatus::kFrame);
    std::vector<double> row(values.begin(), values.end());
    row.push_back(static_cast<double>(slot.stamp(Stage::kScheduled)));
    row.push_back(static_cast<double>(slot.stamp(Stage::kReceived)));
    rows.push_back(row);
  }
  return rows;
}

// Voluntary context switches of the calling thread so far: each sleep (nanosleep) is one.
long voluntary_switches() {
  rusage u{};
  REQUIRE(::getrusage(RUSAGE_THREAD, &u) == 0);
  return u.ru_nvcsw;
}

}  // namespace

TEST_CASE(
    "synthetic phantom: spinning to the due time gives the sleeping source's values, never early") {
  PhantomOptions o;
  o.rate_hz = 2000;
  o.snr_db = 40;  // noise drawn per frame: the order of draws must not change
  SyntheticPhantomSource sleeping(small_table(), o);
  o.spin_ns = 300'000;
  SyntheticPhantomSource spinning(small_table(), o);
  const auto a = read_frames(sleeping, 40);
  const auto b = read_frames(spinning, 40);
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t k = 0; k < 5; ++k) CHECK(a[i][k] == b[i][k]);
    CHECK(b[i][6] >= b[i][5]);  // received at or after its due time
    CHECK(a[i][6] >= a[i][5]);
    if (i > 0) CHECK(b[i][5] - b[i - 1][5] == doctest::Approx(500'000).epsilon(1e-6));
  }
}

TEST_CASE(
    "synthetic phantom: stop() ends a spin before the due time, and a negative spin is refused") {
  PhantomOptions o;
  o.rate_hz = 0.5;             // the second frame is due 2 s after the first
  o.spin_ns = 10'000'000'000;  // spin the whole wait
  SyntheticPhantomSource source(small_table(), o);
  read_frames(source, 1);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    source.stop();
  });
  std::vector<float> values(5);
  eit::pipeline::FrameSlot slot;
  slot.values = values.data();
  CHECK(source.read(slot, std::chrono::milliseconds(5000)) == ReadStatus::kStopped);
  stopper.join();

  o.spin_ns = -1;
  CHECK_THROWS_WITH_AS(SyntheticPhantomSource(small_table(), o),
                       doctest::Contains("spin -1 ns, expected ≥ 0"), std::invalid_argument);
}

TEST_CASE(
    "synthetic phantom: kSpinWholeWait never sleeps between frames, gives the same values and is "
    "never early") {
  PhantomOptions o;
  o.rate_hz = 1000;
  o.snr_db = 40;
  SyntheticPhantomSource sleeping(small_table(), o);
  o.spin_ns = 100'000;  // a partial poll (bench outside spin mode: --source-poll-us)
  SyntheticPhantomSource partly(small_table(), o);
  o.spin_ns = eit::acquisition::kSpinWholeWait;
  SyntheticPhantomSource spinning(small_table(), o);
  constexpr int kFrames = 30;

  long before = voluntary_switches();
  const auto a = read_frames(sleeping, kFrames);
  const long sleeping_switches = voluntary_switches() - before;
  before = voluntary_switches();
  const auto p = read_frames(partly, kFrames);
  const long partly_switches = voluntary_switches() - before;
  before = voluntary_switches();
  const auto b = read_frames(spinning, kFrames);
  const long spinning_switches = voluntary_switches() - before;

  // The count sees sleeps (a wait that a late wake-up has already overtaken needs none, so
  // not every frame's shows on a loaded machine); spinning the whole wait makes none at all.
  CHECK(sleeping_switches > 0);
  CHECK(partly_switches > 0);
  CHECK(spinning_switches == 0);
  for (size_t i = 0; i < b.size(); ++i) {
    for (size_t k = 0; k < 5; ++k) {
      CHECK(a[i][k] == b[i][k]);
      CHECK(p[i][k] == b[i][k]);
    }
    CHECK(b[i][6] >= b[i][5]);  // received at or after its due time
    if (i > 0) CHECK(b[i][5] - b[i - 1][5] == doctest::Approx(1'000'000).epsilon(1e-6));
  }

  // A wait longer than read()'s timeout spins too (no overflow from the huge spin) and times out.
  o.rate_hz = 0.5;
  SyntheticPhantomSource slow(small_table(), o);
  read_frames(slow, 1);
  std::vector<float> values(5);
  eit::pipeline::FrameSlot slot;
  slot.values = values.data();
  before = voluntary_switches();
  CHECK(slow.read(slot, std::chrono::milliseconds(20)) == ReadStatus::kTimeout);
  CHECK(voluntary_switches() - before == 0);
}
