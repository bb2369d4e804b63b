// The CUDA backend's set-up and lifecycle: oversize matrices, the persistent kernel's start, idle
// exit, restart and stop, reduced precision accuracy, frame memory ownership, the frame allocator.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "gpu_test_support.hpp"

using namespace eit;
using namespace eit::gpu::test;
using Mode = eit::gpu::CudaOptions::Mode;

namespace {

// One frame through r; returns its relative error (infinity if any element stayed NaN).
double one_frame(const recon::Model& model, pipeline::Reconstructor& r, pipeline::FramePool& pool,
                 std::mt19937_64& rng) {
  pipeline::FrameSlot* s = pool.try_acquire();
  REQUIRE(s);
  random_frame(model, rng, s->values);
  poison(s->image, model.n_out());
  pipeline::FrameSlot* batch[] = {s};
  REQUIRE(r.submit(batch));
  std::vector<pipeline::FrameSlot*> out(r.max_batch());
  REQUIRE(r.complete(out, true) == 1);
  REQUIRE(out[0] == s);
  const double err = relative_error(s->image, reference_image(model, s->values));
  pool.release(s);
  return err;
}

}  // namespace

TEST_CASE("a matrix with its buffers larger than the device's free memory gives a clear error") {
  if (skip_without_cuda("oversize H")) return;
  std::mt19937_64 rng(fresh_seed());
  const recon::Model model = random_model(1024, 208, rng, false);
  gpu::CudaOptions o;
  o.max_batch = size_t{1} << 28;  // 1024 floats × 2^28 frames = 1 TiB of image buffers
  try {
    auto r = gpu::make_cuda_reconstructor(model, o);
    FAIL("expected std::runtime_error");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    MESSAGE(what);
    CHECK(what.find("GiB free") != std::string::npos);
    CHECK(what.find("1024 × 208") != std::string::npos);
  }
}

TEST_CASE("the persistent kernel starts on the first frame, exits when idle, restarts, stops") {
  if (skip_without_cuda("persistent lifecycle")) return;
  std::mt19937_64 rng(fresh_seed());
  const recon::Model model = random_model(1024, 208, rng, false);
  for (const SingleFramePath& path : kSingleFramePaths) {
    if (path.mode != Mode::kPersistent) continue;
    INFO("path " << path.name);
    gpu::CudaOptions o;
    use_path(o, path);
    o.persistent_idle_exit_ms = 30;
    auto r = gpu::make_cuda_reconstructor(model, o);
    auto pool_owner = bound_pool(*r, 8);
    pipeline::FramePool& pool = *pool_owner;
    CHECK(gpu::cuda_stats(*r).persistent_launches == 0);  // nothing runs before the first frame
    CHECK(one_frame(model, *r, pool, rng) <= 1e-5);
    CHECK(gpu::cuda_stats(*r).persistent_launches == 1);
    CHECK(one_frame(model, *r, pool, rng) <= 1e-5);
    CHECK(gpu::cuda_stats(*r).persistent_launches == 1);  // still resident: no relaunch
    // Idle for longer than persistent_idle_exit_ms: the kernel leaves the GPU by itself.
    bool left = false;
    for (int i = 0; i < 200 && !left; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      left = !gpu::cuda_stats(*r).persistent_resident;
    }
    CHECK(left);
    for (int k = 0; k < 5; ++k) CHECK(one_frame(model, *r, pool, rng) <= 1e-5);
    CHECK(gpu::cuda_stats(*r).persistent_launches == 2);
    CHECK(gpu::cuda_stats(*r).persistent_resident);
    // Frames right at the idle boundary: posts racing the kernel's exit are never lost.
    for (int k = 0; k < 6; ++k) {
      std::this_thread::sleep_for(std::chrono::microseconds(29'000 + 500 * k));
      CHECK(one_frame(model, *r, pool, rng) <= 1e-5);
    }
    check_path_ran(*r, path);
    pool_owner.reset();
    r.reset();  // stops the resident kernel; must return promptly
    CHECK(gpu::cuda_available());
  }
}

TEST_CASE("bf16 and fp16 matrices stay within their documented error bounds") {
  if (skip_without_cuda("reduced precision")) return;
  std::mt19937_64 rng(fresh_seed());
  const recon::Model model = random_model(4096, 208, rng, true);
  // Documented bounds (docs/gpu-notes.md): bf16 ≤ 1e-2, fp16 ≤ 2e-3 relative to float64.
  for (auto [precision, bound, label] :
       {std::tuple{gpu::kBf16, 1e-2, "bf16"}, std::tuple{gpu::kFp16, 2e-3, "fp16"}}) {
    for (const SingleFramePath& path : kSingleFramePaths) {
      gpu::CudaOptions o;
      o.precision = precision;
      use_path(o, path);
      o.max_batch = 32;
      auto r = gpu::make_cuda_reconstructor(model, o);
      auto pool_owner = bound_pool(*r, 64);
      pipeline::FramePool& pool = *pool_owner;
      double worst_single = 0, worst_batch = 0;
      for (int k = 0; k < 4; ++k)
        worst_single = std::max(worst_single, one_frame(model, *r, pool, rng));
      std::vector<pipeline::FrameSlot*> batch;
      for (int i = 0; i < 32; ++i) {
        pipeline::FrameSlot* s = pool.try_acquire();
        random_frame(model, rng, s->values);
        poison(s->image, 4096);
        batch.push_back(s);
      }
      REQUIRE(r->submit(batch));
      std::vector<pipeline::FrameSlot*> out(32);
      REQUIRE(r->complete(out, true) == 32);
      for (auto* s : out) {
        worst_batch =
            std::max(worst_batch, relative_error(s->image, reference_image(model, s->values)));
        pool.release(s);
      }
      MESSAGE(fmt::format("{} {}: single frame {:.2e}, batch of 32 {:.2e}", label, path.name,
                          worst_single, worst_batch));
      check_path_ran(*r, path);
      CHECK(worst_single <= bound);
      CHECK(worst_batch <= bound);
      CHECK(worst_single > 1e-6);  // really reduced: float32 would be ~1e-7
    }
  }
  recon::Model big = random_model(8, 8, rng, false);
  big.H(3, 4) = 1e6f;
  gpu::CudaOptions o;
  o.precision = gpu::kFp16;
  CHECK_THROWS_AS(gpu::make_cuda_reconstructor(big, o), std::invalid_argument);
}

TEST_CASE("frames must come from the backend's own memory: other pools and frames are refused") {
  if (skip_without_cuda("frame memory ownership")) return;
  std::mt19937_64 rng(fresh_seed());
  const recon::Model model = random_model(300, 208, rng, true);
  for (Mode mode : {Mode::kLaunch, Mode::kPersistent}) {
    gpu::CudaOptions o;
    o.mode = mode;
    o.max_batch = 16;
    auto r = gpu::make_cuda_reconstructor(model, o);
    CHECK(r->frame_allocator().name() == "cuda-mapped");
    pipeline::FramePool heap_pool(64, 208, 300);  // plain heap memory: not the backend's
    CHECK_THROWS_WITH_AS(r->bind_frames(heap_pool), doctest::Contains("frame_allocator()"),
                         std::invalid_argument);
    pipeline::FrameSlot* stray[] = {heap_pool.try_acquire()};
    CHECK_THROWS_WITH_AS(r->submit(stray), doctest::Contains("bind_frames"),
                         pipeline::BackendError);
    CHECK(r->in_flight() == 0);
    // A pool of the backend's memory, bound: exact, single frames and batches.
    auto pool = bound_pool(*r, 64);
    CHECK(one_frame(model, *r, *pool, rng) <= 1e-5);
    std::vector<pipeline::FrameSlot*> batch;
    for (int i = 0; i < 16; ++i) {
      pipeline::FrameSlot* s = pool->try_acquire();
      random_frame(model, rng, s->values);
      poison(s->image, 300);
      batch.push_back(s);
    }
    REQUIRE(r->submit(batch));
    std::vector<pipeline::FrameSlot*> out(16);
    REQUIRE(r->complete(out, true) == 16);
    for (auto* s : out) {
      CHECK(relative_error(s->image, reference_image(model, s->values)) <= 1e-5);
      pool->release(s);
    }
    // Still refused after binding: the heap frame is outside the bound pool.
    CHECK_THROWS_AS(r->submit(stray), pipeline::BackendError);
    // A pool of another reconstructor's memory is not this one's either.
    auto other = gpu::make_cuda_reconstructor(model, o);
    auto other_pool = bound_pool(*other, 4);
    CHECK_THROWS_AS(r->bind_frames(*other_pool), std::invalid_argument);
    other_pool.reset();
    pool.reset();
  }
}

TEST_CASE("the frame allocator returns aligned, writable page-locked memory") {
  if (skip_without_cuda("frame allocator")) return;
  std::mt19937_64 rng(fresh_seed());
  auto r = gpu::make_cuda_reconstructor(random_model(64, 16, rng, false));
  pipeline::HostAllocator& allocator = r->frame_allocator();
  void* p = allocator.allocate(1000);
  REQUIRE(p);
  CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
  std::memset(p, 0xab, 1000);
  allocator.deallocate(p);
}

TEST_CASE("submit before any reference and oversized batches are reported as BackendError") {
  if (skip_without_cuda("misuse")) return;
  std::mt19937_64 rng(fresh_seed());
  recon::Model model = random_model(64, 16, rng, false);
  model.v_ref.resize(0);  // no reference: must be captured and set first
  gpu::CudaOptions o;
  o.max_batch = 2;
  auto r = gpu::make_cuda_reconstructor(model, o);
  auto pool = bound_pool(*r, 8);
  pipeline::FrameSlot* s = pool->try_acquire();
  pipeline::FrameSlot* one[] = {s};
  CHECK_THROWS_AS(r->submit(one), pipeline::BackendError);
  r->set_reference(std::vector<double>(16, 1.0), false);
  pipeline::FrameSlot* three[] = {s, s, s};
  CHECK_THROWS_AS(r->submit(three), pipeline::BackendError);
  CHECK(r->in_flight() == 0);
}
