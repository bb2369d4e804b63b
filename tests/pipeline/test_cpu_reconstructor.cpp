#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include "allocation_count.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/frame_pool.hpp"
#include "pipeline_test_support.hpp"

using namespace eit::pipeline;
using eit::test::expected_image;
using eit::test::random_frames;
using eit::test::random_model;

using eit::test::t_allocations;

namespace {

// Runs every frame through the reconstructor in batches of `batch` and checks each image.
double max_error_for_batch(CpuReconstructor& r, const eit::recon::Model& m,
                           const std::vector<std::vector<float>>& frames, size_t batch,
                           const Eigen::VectorXd& v_ref, bool normalize) {
  FramePool pool(batch, m.n_meas(), m.n_out());
  std::vector<FrameSlot*> slots(batch), out(r.max_batch());
  double worst = 0;
  for (size_t start = 0; start + batch <= frames.size(); start += batch) {
    for (size_t j = 0; j < batch; ++j) {
      slots[j] = &pool.slot(j);
      slots[j]->flags = 0;
      std::copy(frames[start + j].begin(), frames[start + j].end(), slots[j]->values);
    }
    REQUIRE(r.submit(slots));
    REQUIRE(r.complete(out, true) == batch);
    for (size_t j = 0; j < batch; ++j) {
      REQUIRE(out[j] == slots[j]);
      const Eigen::VectorXd want = expected_image(m, frames[start + j], v_ref, normalize);
      std::vector<float> got(out[j]->image, out[j]->image + m.n_out());
      worst = std::max(worst, eit::test::relative_error(got, want));
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("CPU reconstructor matches H·(v − v_ref) in double for every batch size 1..16") {
  const auto m = random_model();
  const auto frames = random_frames(m, 48);
  CpuReconstructor r(m, {16});
  CHECK(r.n_out() == 1024);
  CHECK(r.n_meas() == 208);
  for (size_t batch = 1; batch <= 16; ++batch) {
    CAPTURE(batch);
    CHECK(max_error_for_batch(r, m, frames, batch, m.v_ref, false) < 2e-5);
  }
}

TEST_CASE("CPU reconstructor split over threads matches H·(v − v_ref) for every batch size") {
  const auto m = random_model();
  const auto frames = random_frames(m, 48);
  for (size_t threads : {2, 3, 5}) {
    CAPTURE(threads);
    CpuReconstructor r(m, {16, threads});
    CHECK(r.threads() == threads);
    for (size_t batch = 1; batch <= 16; ++batch) {
      CAPTURE(batch);
      CHECK(max_error_for_batch(r, m, frames, batch, m.v_ref, false) < 2e-5);
    }
  }
  // More threads than 16-row blocks of H: capped, every row still computed.
  const auto small = random_model(40, 12);
  CpuReconstructor capped(small, {4, 8});
  CHECK(capped.threads() == 2);
  CHECK(max_error_for_batch(capped, small, random_frames(small, 8), 4, small.v_ref, false) < 2e-5);
}

TEST_CASE("CPU reconstructor normalises by |v_ref| when asked") {
  const auto m = random_model(256);
  const auto frames = random_frames(m, 16);
  CpuReconstructor r(m, {8});
  r.set_reference({m.v_ref.data(), static_cast<size_t>(m.v_ref.size())}, true);
  for (size_t batch : {1, 3, 8})
    CHECK(max_error_for_batch(r, m, frames, batch, m.v_ref, true) < 2e-5);
}

TEST_CASE("CPU reconstructor gives a NaN frame a zero image and leaves its batch mates intact") {
  const auto m = random_model(256);
  auto frames = random_frames(m, 4);
  frames[1][17] = std::numeric_limits<float>::quiet_NaN();
  frames[2][3] = std::numeric_limits<float>::infinity();
  CpuReconstructor r(m, {4});
  FramePool pool(4, m.n_meas(), m.n_out());
  std::vector<FrameSlot*> slots(4), out(4);
  for (size_t j = 0; j < 4; ++j) {
    slots[j] = &pool.slot(j);
    std::copy(frames[j].begin(), frames[j].end(), slots[j]->values);
  }
  REQUIRE(r.submit(slots));
  REQUIRE(r.complete(out, true) == 4);
  for (size_t j : {1, 2}) {
    CHECK((out[j]->flags & kFlagNonFinite) != 0);
    for (size_t i = 0; i < m.n_out(); ++i) REQUIRE(out[j]->image[i] == 0.0f);
  }
  for (size_t j : {0, 3}) {
    CHECK((out[j]->flags & kFlagNonFinite) == 0);
    std::vector<float> got(out[j]->image, out[j]->image + m.n_out());
    CHECK(eit::test::relative_error(got, expected_image(m, frames[j], m.v_ref, false)) < 2e-5);
  }
}

TEST_CASE("CPU reconstructor holds one batch: a second submit waits for complete") {
  const auto m = random_model(64);
  CpuReconstructor r(m, {2});
  FramePool pool(3, m.n_meas(), m.n_out());
  FrameSlot* a[] = {&pool.slot(0)};
  FrameSlot* b[] = {&pool.slot(1), &pool.slot(2), &pool.slot(0)};
  std::vector<FrameSlot*> out(2);
  CHECK(r.max_in_flight() == 1);
  REQUIRE(r.submit(a));
  CHECK(r.in_flight() == 1);
  CHECK_FALSE(r.submit(a));
  CHECK(r.complete(out, false) == 1);
  CHECK(r.complete(out, false) == 0);
  CHECK_FALSE(r.submit(b));  // larger than max_batch
}

TEST_CASE("CPU reconstructor rejects a reference of the wrong length or with zeros to normalise") {
  const auto m = random_model(64);
  CpuReconstructor r(m);
  std::vector<double> short_ref(207, 1.0), zero_ref(208, 1.0);
  zero_ref[5] = 0;
  CHECK_THROWS_WITH_AS(r.set_reference(short_ref, false),
                       doctest::Contains("v_ref has 207 values, H has 208 columns"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(r.set_reference(zero_ref, true), doctest::Contains("v_ref[5] is 0"),
                       std::invalid_argument);
  CHECK_NOTHROW(r.set_reference(zero_ref, false));
}

#if EIT_COUNT_MALLOC
TEST_CASE("CPU reconstructor's submit and complete do not allocate, GEMV or GEMM") {
  const auto m = random_model();
  const auto frames = random_frames(m, 16);
  CpuReconstructor r(m, {16});
  FramePool pool(16, m.n_meas(), m.n_out());
  std::vector<FrameSlot*> slots(16), out(16);
  for (size_t j = 0; j < 16; ++j) {
    slots[j] = &pool.slot(j);
    std::copy(frames[j].begin(), frames[j].end(), slots[j]->values);
  }
  CpuReconstructor split(m, {16, 3});
  for (CpuReconstructor* rec : {&r, &split}) {
    for (size_t batch : {1, 2, 7, 16}) {
      CAPTURE(batch);
      CAPTURE(rec->threads());
      std::span<FrameSlot* const> b(slots.data(), batch);
      const uint64_t before = t_allocations;
      const bool ok = rec->submit(b);
      const size_t n = rec->complete(out, true);
      const uint64_t allocations = t_allocations - before;
      CHECK(ok);
      CHECK(n == batch);
      CHECK(allocations == 0);
    }
  }
}
#endif
