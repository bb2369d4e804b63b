#include <doctest/doctest.h>

#include <thread>

#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/paced_source.hpp"
#include "pipeline_test_support.hpp"

using namespace eit::pipeline;
using eit::test::VectorSource;

namespace {
std::vector<std::vector<float>> ramp_frames(size_t n) {
  std::vector<std::vector<float>> f(n, std::vector<float>(4));
  for (size_t i = 0; i < n; ++i) f[i].assign(4, static_cast<float>(i));
  return f;
}
}  // namespace

TEST_CASE("paced source releases frame i no earlier than t0 + i/rate and stamps its due time") {
  VectorSource inner(ramp_frames(20));
  PacedSource paced(inner, {500, 1});  // 2 ms apart
  CHECK(paced.nominal_rate_hz() == 500);
  CHECK(paced.describe().find("paced at 500 frames/s") != std::string::npos);
  std::vector<float> values(4), image(1);
  FrameSlot slot;
  slot.values = values.data();
  slot.image = image.data();
  int64_t first_due = 0;
  for (int i = 0; i < 20; ++i) {
    REQUIRE(paced.read(slot, std::chrono::milliseconds(100)) == ReadStatus::kFrame);
    CHECK(slot.seq == static_cast<uint64_t>(i));
    CHECK(values[0] == static_cast<float>(i));
    const int64_t due = slot.stamp(Stage::kScheduled);
    if (i == 0) first_due = due;
    CHECK(due == first_due + int64_t{i} * 2'000'000);
    CHECK(slot.stamp(Stage::kReceived) >= due);
  }
  // The end shows at the time the next frame would have been due.
  CHECK(paced.read(slot, std::chrono::milliseconds(100)) == ReadStatus::kEnd);
}

TEST_CASE("paced source keeps the timeout: a frame not yet due stays unread, then comes on time") {
  VectorSource inner(ramp_frames(3));
  PacedSource paced(inner, {20, 1});  // 50 ms apart
  std::vector<float> values(4), image(1);
  FrameSlot slot;
  slot.values = values.data();
  slot.image = image.data();
  REQUIRE(paced.read(slot, std::chrono::milliseconds(10)) == ReadStatus::kFrame);
  const int64_t first_due = slot.stamp(Stage::kScheduled);
  values[0] = -1;
  CHECK(paced.read(slot, std::chrono::milliseconds(1)) == ReadStatus::kTimeout);
  CHECK(values[0] == -1);  // nothing was read into the slot
  REQUIRE(paced.read(slot, std::chrono::milliseconds(1000)) == ReadStatus::kFrame);
  CHECK(values[0] == 1);
  CHECK(slot.stamp(Stage::kScheduled) == first_due + 50'000'000);
  CHECK(slot.stamp(Stage::kReceived) >= first_due + 50'000'000);
}

TEST_CASE("paced source: speed scales the inner source's nominal rate, unpaced passes through") {
  class Rated final : public Source {
   public:
    std::string describe() const override { return "rated"; }
    size_t n_values() const noexcept override { return 1; }
    double nominal_rate_hz() const noexcept override { return 20; }
    ReadStatus read(FrameSlot&, std::chrono::milliseconds) override { return ReadStatus::kEnd; }
    void stop() noexcept override {}
    SourceStats stats() const override { return {}; }
  } rated;
  CHECK(PacedSource(rated, {0, 4}).nominal_rate_hz() == 80);
  VectorSource unpaced(ramp_frames(2));
  PacedSource pass(unpaced, {});
  CHECK(pass.nominal_rate_hz() == 0);
  CHECK(pass.describe() == "test vector source");
  CHECK_THROWS_AS(PacedSource(rated, {-1, 1}), std::invalid_argument);
  CHECK_THROWS_WITH_AS(PacedSource(rated, {0, 0}), doctest::Contains("speed 0"),
                       std::invalid_argument);
}

TEST_CASE("stop() wakes a paced read waiting for a far due time") {
  VectorSource inner(ramp_frames(3));
  PacedSource paced(inner, {0.01, 1});  // frame 1 due 100 s after frame 0
  std::vector<float> values(4), image(1);
  FrameSlot slot;
  slot.values = values.data();
  slot.image = image.data();
  REQUIRE(paced.read(slot, std::chrono::milliseconds(10)) == ReadStatus::kFrame);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    paced.stop();
  });
  // Returns only because of stop(); without it this read would time out after 60 s.
  CHECK(paced.read(slot, std::chrono::milliseconds(60'000)) == ReadStatus::kStopped);
  stopper.join();
}
