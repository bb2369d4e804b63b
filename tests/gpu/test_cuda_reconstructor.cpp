// The CUDA reconstructor against a float64 CPU reference: sizes, batch sizes, modes, ordering,
// normalisation and non-finite frames. Every image is poisoned (NaN) before each run.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpu_test_support.hpp"

using namespace eit;
using namespace eit::gpu::test;
using Mode = eit::gpu::CudaOptions::Mode;

namespace {

struct Size {
  size_t n_out, n_meas;
};

// Runs `batches` (sizes) through a reconstructor, keeping up to max_in_flight pending, and checks
// every image against the reference and the completion order. Returns the largest error.
double run_and_check(const recon::Model& model, pipeline::Reconstructor& r,
                     pipeline::FramePool& pool, const std::vector<size_t>& batches,
                     std::mt19937_64& rng, double tolerance) {
  std::vector<pipeline::FrameSlot*> out(r.max_batch());
  uint64_t next_seq = 0, expect_seq = 0;
  double worst = 0;
  auto drain_one = [&](bool wait) {
    const size_t n = r.complete(out, wait);
    for (size_t i = 0; i < n; ++i) {
      pipeline::FrameSlot* s = out[i];
      CHECK(s->seq == expect_seq);  // completion in submission order
      ++expect_seq;
      const double err = relative_error(s->image, reference_image(model, s->values));
      worst = std::max(worst, err);
      CHECK_MESSAGE(err <= tolerance, fmt::format("{}×{} frame {}: relative error {:.3g}",
                                                  model.n_out(), model.n_meas(), s->seq, err));
      CHECK((s->flags & pipeline::kFlagNonFinite) == 0);
      pool.release(s);
    }
    return n;
  };
  for (size_t b : batches) {
    std::vector<pipeline::FrameSlot*> batch;
    while (batch.size() < b) {
      pipeline::FrameSlot* s = pool.try_acquire();
      if (!s) {
        REQUIRE(drain_one(true) > 0);
        continue;
      }
      s->seq = next_seq++;
      random_frame(model, rng, s->values);
      poison(s->image, model.n_out());
      batch.push_back(s);
    }
    while (!r.submit(batch)) REQUIRE(drain_one(true) > 0);
  }
  while (r.in_flight() > 0) drain_one(true);
  CHECK(expect_seq == next_seq);
  return worst;
}

// A completed frame of a batch with one bad frame: the bad one flagged non-finite with an image of
// zeros, the others unflagged and matching the reference (n_out 1024).
void check_completed(const recon::Model& model, const pipeline::FrameSlot& s, bool bad) {
  if (bad) {
    CHECK((s.flags & pipeline::kFlagNonFinite) != 0);
    CHECK(all_zero(s.image, 1024));
  } else {
    CHECK((s.flags & pipeline::kFlagNonFinite) == 0);
    CHECK(relative_error(s.image, reference_image(model, s.values)) <= 1e-5);
  }
}

std::vector<size_t> batch_plan(size_t max_batch) {
  std::vector<size_t> plan = {1, 2, 1, 1, 3, 7, 1, max_batch, 5, 1, max_batch - 1, 16, 1};
  for (size_t& b : plan) b = std::clamp<size_t>(b, 1, max_batch);
  return plan;
}

}  // namespace

TEST_CASE("cuda_available answers without crashing and the description says why or what") {
  std::string why;
  const bool ok = gpu::cuda_available(&why);
  const std::string description = gpu::cuda_device_description();
  CHECK(!description.empty());
  if (!ok) {
    CHECK(!why.empty());
    eit::test::report_skip("device description", "no CUDA device: " + why);
  } else {
    MESSAGE("device: " << description);
  }
}

TEST_CASE("float32 images match the float64 reference for every size, batch size and mode") {
  if (skip_without_cuda("float32 accuracy")) return;
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const std::vector<Size> sizes = {{1, 1},    {3, 5},      {7, 13},     {33, 207},
                                   {257, 31}, {1024, 208}, {4096, 208}, {1001, 929}};
  for (const Size& size : sizes) {
    const recon::Model model = random_model(size.n_out, size.n_meas, rng, (rng() & 1) != 0);
    for (const SingleFramePath& path : kSingleFramePaths) {
      gpu::CudaOptions o;
      o.max_batch = 32;
      o.max_in_flight = 3;
      use_path(o, path);
      auto r = gpu::make_cuda_reconstructor(model, o);
      auto pool = bound_pool(*r, 128);
      const double err = run_and_check(model, *r, *pool, batch_plan(o.max_batch), rng, 1e-5);
      MESSAGE(fmt::format("{}×{} {}: max relative error {:.2e}", size.n_out, size.n_meas, path.name,
                          err));
      check_path_ran(*r, path);
    }
  }
}

TEST_CASE("a large matrix (20000×928) matches the reference in batches 1 to 64") {
  if (skip_without_cuda("20000×928 accuracy")) return;
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const recon::Model model = random_model(20000, 928, rng, true);
  for (Mode mode : {Mode::kAuto, Mode::kPersistent}) {
    gpu::CudaOptions o;
    o.max_batch = 64;
    o.mode = mode;
    auto r = gpu::make_cuda_reconstructor(model, o);
    auto pool = bound_pool(*r, 160);
    const double err = run_and_check(model, *r, *pool, {1, 2, 1, 64, 3}, rng, 1e-5);
    MESSAGE(fmt::format("20000×928: max relative error {:.2e}", err));
  }
}

TEST_CASE("launched single frames are exact for every rows-kernel shape") {
  if (skip_without_cuda("launched rows-kernel shapes")) return;
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  // Row counts that leave partial passes, partial 4-row groups and blocks with no rows; blocks
  // from one to more than there are 4-row groups (clamped).
  const std::vector<Size> sizes = {{37, 13}, {1001, 929}, {20000, 928}};
  for (const Size& size : sizes) {
    const recon::Model model = random_model(size.n_out, size.n_meas, rng, true);
    for (int blocks : {0, 1, 7, 250, 100000})  // 0: automatic
      for (int rows_per_warp : {0, 4, 8})
        for (gpu::Precision p : {gpu::kFloat32, gpu::kBf16}) {
          INFO(fmt::format("{}×{}, {} blocks, {} rows per warp, {}", size.n_out, size.n_meas,
                           blocks, rows_per_warp, p == gpu::kFloat32 ? "float32" : "bf16"));
          gpu::CudaOptions o;
          o.max_batch = 4;
          o.mode = Mode::kLaunch;
          o.precision = p;
          o.launch_blocks = blocks;
          o.launch_rows_per_warp = rows_per_warp;
          const double tolerance = p == gpu::kFloat32 ? 1e-5 : 1e-2;  // bf16: documented bound
          auto r = gpu::make_cuda_reconstructor(model, o);
          auto pool = bound_pool(*r, 8);
          run_and_check(model, *r, *pool, {1, 1, 1}, rng, tolerance);
          // A bad frame right after good ones: zeros, flagged.
          pipeline::FrameSlot* s = pool->try_acquire();
          REQUIRE(s);
          random_frame(model, rng, s->values);
          s->values[rng() % size.n_meas] = std::numeric_limits<float>::quiet_NaN();
          poison(s->image, model.n_out());
          std::vector<pipeline::FrameSlot*> batch{s}, out(4);
          REQUIRE(r->submit(batch));
          REQUIRE(r->complete(out, true) == 1);
          CHECK((out[0]->flags & pipeline::kFlagNonFinite) != 0);
          CHECK(all_zero(out[0]->image, model.n_out()));
          pool->release(out[0]);
          const gpu::CudaStats st = gpu::cuda_stats(*r);
          CHECK(st.persistent_frames == 0);
          // Automatic: 8 rows per warp for a float32 H above 32 MiB (20000×928), else 4.
          const bool eight = size.n_out == 20000 && p == gpu::kFloat32;
          CHECK(st.launch_rows_per_warp == (rows_per_warp != 0 ? rows_per_warp : eight ? 8 : 4));
        }
  }
}

TEST_CASE("launched-kernel options out of range are refused at set-up, naming the field") {
  if (skip_without_cuda("launched-kernel options")) return;
  std::mt19937_64 rng(fresh_seed());
  const recon::Model model = random_model(64, 16, rng, true);
  gpu::CudaOptions o;
  o.launch_rows_per_warp = 6;
  CHECK_THROWS_WITH_AS(gpu::make_cuda_reconstructor(model, o),
                       doctest::Contains("launch_rows_per_warp = 6"), std::invalid_argument);
  o.launch_rows_per_warp = 0;
  o.launch_blocks = -2;
  CHECK_THROWS_WITH_AS(gpu::make_cuda_reconstructor(model, o),
                       doctest::Contains("launch_blocks = -2"), std::invalid_argument);
}

TEST_CASE("batches complete in submission order with several in flight, mixing both paths") {
  if (skip_without_cuda("ordering")) return;
  std::mt19937_64 rng(fresh_seed());
  const recon::Model model = random_model(1024, 208, rng, false);
  gpu::CudaOptions o;
  o.max_batch = 64;
  o.max_in_flight = 8;
  o.mode = Mode::kPersistent;
  auto r = gpu::make_cuda_reconstructor(model, o);
  auto pool_owner = bound_pool(*r, 256);
  pipeline::FramePool& pool = *pool_owner;
  // Large batches then single frames: the singles (persistent kernel) tend to finish first.
  std::vector<size_t> plan;
  for (int k = 0; k < 20; ++k) {
    plan.push_back(64);
    plan.push_back(1);
    plan.push_back(1);
    plan.push_back(17);
  }
  run_and_check(model, *r, pool, plan, rng, 1e-5);
  const auto stats = gpu::cuda_stats(*r);
  CHECK(stats.persistent_frames >= 1);
  CHECK(stats.launched_batches >= 40);
  CHECK(stats.copy_engine_batches > 0);  // slots taken in pool order: one DMA per batch
}

TEST_CASE("single frames up to the persistent ring's depth in flight stay exact and in order") {
  if (skip_without_cuda("persistent ring")) return;
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  // Odd measurement counts exercise the LL entry's padding word.
  for (const Size& size : {Size{1024, 208}, Size{257, 31}, Size{33, 207}, Size{2048, 1001}}) {
    const recon::Model model = random_model(size.n_out, size.n_meas, rng, true);
    for (const SingleFramePath& path : kSingleFramePaths) {
      if (path.mode != Mode::kPersistent) continue;
      gpu::CudaOptions o;
      o.max_batch = 4;
      o.max_in_flight = 15;  // the ring holds 16 entries; 15 frames may be unfinished
      use_path(o, path);
      auto r = gpu::make_cuda_reconstructor(model, o);
      auto pool = bound_pool(*r, 24);
      const double err = run_and_check(model, *r, *pool, std::vector<size_t>(300, 1), rng, 1e-5);
      MESSAGE(fmt::format("{}×{} {}: 300 single frames, 15 in flight, max relative error {:.2e}",
                          size.n_out, size.n_meas, path.name, err));
      check_path_ran(*r, path);
      CHECK(gpu::cuda_stats(*r).persistent_frames == 300);
    }
  }
}

TEST_CASE("normalisation on and off via set_reference follows the reference formula") {
  if (skip_without_cuda("normalisation")) return;
  std::mt19937_64 rng(fresh_seed());
  recon::Model model = random_model(512, 208, rng, false);
  gpu::CudaOptions o;
  o.max_batch = 16;
  auto r = gpu::make_cuda_reconstructor(model, o);
  auto pool_owner = bound_pool(*r, 64);
  pipeline::FramePool& pool = *pool_owner;
  for (bool normalize : {true, false, true}) {
    for (Eigen::Index i = 0; i < model.v_ref.size(); ++i) model.v_ref[i] *= 1.5;
    model.normalize = normalize;
    r->set_reference(std::span<const double>(model.v_ref.data(), model.v_ref.size()), normalize);
    run_and_check(model, *r, pool, {1, 16, 3, 1}, rng, 1e-5);
  }
  std::vector<double> bad_ref(208, 1.0);
  bad_ref[17] = 0.0;
  CHECK_THROWS_AS(r->set_reference(bad_ref, true), std::invalid_argument);
  CHECK_THROWS_AS(r->set_reference(std::vector<double>(207, 1.0), false), std::invalid_argument);
}

TEST_CASE("non-finite or flagged frames give zero images and kFlagNonFinite, the rest are exact") {
  if (skip_without_cuda("non-finite frames")) return;
  std::mt19937_64 rng(fresh_seed());
  const recon::Model model = random_model(1024, 208, rng, true);
  for (const SingleFramePath& path : kSingleFramePaths) {
    INFO("path " << path.name);
    gpu::CudaOptions o;
    o.max_batch = 8;
    use_path(o, path);
    auto r = gpu::make_cuda_reconstructor(model, o);
    auto pool_owner = bound_pool(*r, 64);
    pipeline::FramePool& pool = *pool_owner;
    for (size_t b : {size_t{1}, size_t{8}}) {
      for (int kind = 0; kind < 3; ++kind) {  // NaN value, Inf value, flag set by the source
        std::vector<pipeline::FrameSlot*> batch;
        for (size_t i = 0; i < b; ++i) {
          pipeline::FrameSlot* s = pool.try_acquire();
          REQUIRE(s);
          random_frame(model, rng, s->values);
          poison(s->image, 1024);
          batch.push_back(s);
        }
        pipeline::FrameSlot* bad = batch[b / 2];
        if (kind == 0) bad->values[rng() % 208] = std::numeric_limits<float>::quiet_NaN();
        if (kind == 1) bad->values[207] = -std::numeric_limits<float>::infinity();
        if (kind == 2) bad->flags |= pipeline::kFlagNonFinite;
        REQUIRE(r->submit(batch));
        std::vector<pipeline::FrameSlot*> out(8);
        REQUIRE(r->complete(out, true) == b);
        for (size_t i = 0; i < b; ++i) {
          check_completed(model, *out[i], out[i] == bad);
          pool.release(out[i]);
        }
      }
    }
    check_path_ran(*r, path);
  }
}

TEST_CASE("cuBLAS-path batches: values staged or zero-copy, in or out of pool order, bad frames") {
  // Every batch on the cuBLAS path (own_kernel_max_batch 1), one lane reused batch after batch:
  // a frame flagged in one batch must not stay flagged in the next (prepare writes only bad
  // frames' status words; the host zeroes them), and values staged by the copy engine (slots in
  // pool order; with or without the descriptors) or read in place (slots out of order) give the
  // same exact images.
  if (skip_without_cuda("cuBLAS-path batches")) return;
  std::mt19937_64 rng(fresh_seed());
  const recon::Model model = random_model(1024, 208, rng, true);
  for (int variant : {0, 1, 2}) {  // values read in place; staged; staged with descriptors
    const bool stage = variant > 0;
    CAPTURE(variant);
    gpu::CudaOptions o;
    o.max_batch = 48;
    o.max_in_flight = 1;
    o.mode = Mode::kLaunch;
    o.own_kernel_max_batch = 1;
    o.stage_batch_values = stage;
    o.stage_batch_descriptors = variant == 2;
    auto r = gpu::make_cuda_reconstructor(model, o);
    // 48 + 33 slots released in address order: every batch below gets consecutive slots.
    auto pool_owner = bound_pool(*r, 81);
    pipeline::FramePool& pool = *pool_owner;
    for (int round = 0; round < 6; ++round) {
      CAPTURE(round);
      const size_t b = round % 2 == 0 ? 48 : 33;
      std::vector<pipeline::FrameSlot*> batch;
      for (size_t i = 0; i < b; ++i) {
        pipeline::FrameSlot* s = pool.try_acquire();
        REQUIRE(s);
        random_frame(model, rng, s->values);
        s->flags = 0;
        poison(s->image, 1024);
        batch.push_back(s);
      }
      if (round >= 3) std::swap(batch[1], batch[b - 2]);  // out of pool order: no staging
      pipeline::FrameSlot* bad = round % 3 == 0 ? batch[b / 3] : nullptr;
      if (bad) bad->values[rng() % 208] = std::numeric_limits<float>::quiet_NaN();
      REQUIRE(r->submit(batch));
      std::vector<pipeline::FrameSlot*> out(48);
      REQUIRE(r->complete(out, true) == b);
      for (size_t i = 0; i < b; ++i) {
        check_completed(model, *out[i], out[i] == bad);
      }
      std::sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(b));
      for (size_t i = 0; i < b; ++i) pool.release(out[i]);
    }
    CHECK(gpu::cuda_stats(*r).launched_batches == 6);
    CHECK(gpu::cuda_stats(*r).staged_batches == (stage ? 3u : 0u));
  }
}

TEST_CASE(
    "an H over 32 MiB is kept in persisting L2 where the device holds half of it, frames stay "
    "exact, and l2_persist false or a small H keeps none") {
  if (skip_without_cuda("L2 residency of H")) return;
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  INFO(gpu::cuda_device_description());
  const recon::Model big = random_model(20000, 928, rng, true);  // 70.8 MiB in float32
  const size_t h_bytes = size_t{20000} * 928 * sizeof(float);
  for (const bool keep : {true, false}) {
    CAPTURE(keep);
    gpu::CudaOptions o;
    o.max_batch = 8;
    o.l2_persist = keep;
    auto r = gpu::make_cuda_reconstructor(big, o);
    auto pool = bound_pool(*r, 24);
    run_and_check(big, *r, *pool, {1, 1, 3, 8, 1, 2}, rng, 1e-5);
    const gpu::CudaStats st = gpu::cuda_stats(*r);
    if (!keep) {
      CHECK(st.l2_device_max_persisting == 0);  // not even looked at
      CHECK(st.l2_persisting_bytes == 0);
      CHECK(st.l2_window_bytes == 0);
      continue;
    }
    // Kept where the device's set-aside holds half of H and one window covers it (the H200:
    // 37.5 MiB and 128 MiB).
    const size_t can_keep = std::min(h_bytes, st.l2_device_max_persisting);
    const bool expect = h_bytes <= st.l2_device_max_window && 2 * can_keep >= h_bytes;
    CAPTURE(st.l2_device_max_persisting);
    CAPTURE(st.l2_device_max_window);
    if (gpu::cuda_device_description().find("H200") != std::string::npos) CHECK(expect);
    if (expect) {
      CHECK(st.l2_persisting_bytes > 0);
      CHECK(st.l2_persisting_bytes <= can_keep);
      CHECK(st.l2_window_bytes == h_bytes);
      CHECK(st.l2_hit_ratio > 0.0f);
      CHECK(st.l2_hit_ratio ==
            doctest::Approx(std::min(1.0, double(st.l2_persisting_bytes) / st.l2_window_bytes)));
    } else {
      CHECK(st.l2_persisting_bytes == 0);
      CHECK(st.l2_window_bytes == 0);
    }
  }
  const recon::Model small = random_model(1024, 208, rng, true);  // 0.85 MB: stays in L2 anyway
  auto r = gpu::make_cuda_reconstructor(small, {});
  auto pool = bound_pool(*r, 8);
  run_and_check(small, *r, *pool, {1, 2}, rng, 1e-5);
  CHECK(gpu::cuda_stats(*r).l2_persisting_bytes == 0);
}
