// bench_cuda's measurements (see bench_cuda_run.hpp).
#include "bench_cuda_run.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "bench_cuda_plan.hpp"
#include "eit/gpu/cuda_backend.hpp"
#include "eit/pipeline/clock.hpp"

namespace eit::gpu::bench {
namespace {

int64_t spin_until(int64_t t) {
  int64_t now;
  while ((now = pipeline::now_ns()) < t) {
  }
  return now;
}

}  // namespace

void BackendFrame::operator()() {
  pipeline::FrameSlot* s = &pool.slot(next++ % pool.size());
  s->flags = 0;
  pipeline::FrameSlot* batch[] = {s};
  if (!r.submit(batch) || r.complete(out, true) != 1) throw std::runtime_error("frame lost");
}

std::vector<int64_t> time_frames(const std::function<void()>& frame, int iters) {
  for (int i = 0; i < std::min(iters / 10 + 10, 500); ++i) frame();
  std::vector<int64_t> ns(iters);
  for (int i = 0; i < iters; ++i) {
    const int64_t t0 = pipeline::now_ns();
    frame();
    ns[i] = pipeline::now_ns() - t0;
  }
  return ns;
}

std::vector<int64_t> paced(const std::function<void()>& frame, double rate_hz, int frames) {
  for (int i = 0; i < 50; ++i) frame();
  const int64_t period = static_cast<int64_t>(1e9 / rate_hz);
  const int64_t start = pipeline::now_ns() + 1'000'000;
  std::vector<int64_t> ns(frames);
  for (int i = 0; i < frames; ++i) {
    const int64_t sched = start + i * period;
    spin_until(sched);
    frame();
    ns[i] = pipeline::now_ns() - sched;
  }
  return ns;
}

double backend_throughput(pipeline::Reconstructor& r, pipeline::FramePool& pool, size_t b,
                          double seconds) {
  std::vector<pipeline::FrameSlot*> out(r.max_batch()), batch;
  size_t frames = 0;
  auto drain = [&] {
    const size_t n = r.complete(out, true);
    for (size_t i = 0; i < n; ++i) pool.release(out[i]);
    return n;
  };
  const int64_t t0 = pipeline::now_ns();
  int64_t elapsed = 0;
  while (elapsed < seconds * 1e9 || frames < 8 * b) {
    batch.clear();
    while (batch.size() < b) {
      pipeline::FrameSlot* s = pool.try_acquire();
      if (s)
        batch.push_back(s);
      else
        frames += drain();
    }
    while (!r.submit(batch)) frames += drain();
    elapsed = pipeline::now_ns() - t0;
  }
  while (r.in_flight()) frames += drain();
  return frames / ((pipeline::now_ns() - t0) * 1e-9);
}

double naive_throughput(NaiveReference& naive, size_t b, double seconds) {
  size_t n = 0;
  const int64_t t0 = pipeline::now_ns();
  while (pipeline::now_ns() - t0 < seconds * 1e9 || n < 8 * b) {
    naive.batch(b);
    n += b;
  }
  return n / ((pipeline::now_ns() - t0) * 1e-9);
}

SharedResult shared_streams(size_t n_out, size_t n_meas, double rate, bool quick, int variant) {
  const recon::Model model = make_model(n_out, n_meas, 99);
  const int frames = static_cast<int>(rate * (quick ? 0.2 : 1.0));
  std::vector<std::vector<int64_t>> lat(kSharedStreams);
  std::vector<std::thread> threads;
  SharedResult result;
  result.errors.resize(kSharedStreams);
  for (int t = 0; t < kSharedStreams; ++t)
    threads.emplace_back([&, t] {
      try {
        if (variant == 0) {
          pipeline::FramePool pool(1, n_meas, n_out);
          fill_values(pool, model, t + 1);
          NaiveReference naive(model.H.data(), n_out, n_meas, 1);
          std::memcpy(naive.values(0), pool.slot(0).values, n_meas * 4);
          lat[t] = paced([&] { naive.frame(); }, rate, frames);
        } else {
          CudaOptions o;
          o.max_batch = 4;
          o.mode = variant == 1 ? CudaOptions::Mode::kLaunch : CudaOptions::Mode::kAuto;
          auto r = make_cuda_reconstructor(model, o);
          auto pool = backend_pool(*r, 16, model, t + 1);
          BackendFrame frame(*r, *pool);
          lat[t] = paced(std::ref(frame), rate, frames);
        }
      } catch (const std::exception& e) {
        result.errors[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kSharedStreams; ++t)
    result.latency_ns.insert(result.latency_ns.end(), lat[t].begin(), lat[t].end());
  return result;
}

}  // namespace eit::gpu::bench
