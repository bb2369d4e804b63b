// bench_cuda: the CUDA backend side by side with a naive cuBLAS reference, in one run on one GPU.
//   single-frame latency host-to-host (p50/p99/p99.9/max) for each variant; batched throughput
//   against the PCIe bound (image bytes ÷ device-to-host bandwidth measured in this run); latency
//   under paced arrival at 1 kHz and 2.5 kHz; 8 streams (threads, each its own backend) sharing
//   the GPU. Writes a markdown report to stdout and to --out FILE.
//   bench_cuda [--out FILE] [--sizes 1024x208,4096x208,20000x928,200000x928] [--quick] [--big]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench_stats.hpp"
#include "eit/gpu/cuda_backend.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/frame_pool.hpp"
#include "naive_reference.hpp"

using namespace eit;
using namespace eit::gpu;
using namespace eit::gpu::bench;
using Mode = CudaOptions::Mode;

namespace {

std::string g_report;
template <typename... A>
void emit(fmt::format_string<A...> f, A&&... a) {
  std::string line = fmt::format(f, std::forward<A>(a)...) + "\n";
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
  g_report += line;
}

struct Rng {  // xorshift64*: fast enough to fill a 0.7 GB matrix
  uint64_t s;
  float next() {
    s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
    return static_cast<float>(static_cast<int64_t>(s * 0x2545F4914F6CDD1Dull) >> 11) * 0x1p-52f;
  }
};

recon::Model make_model(size_t n_out, size_t n_meas, uint64_t seed) {
  Rng rng{seed | 1};
  recon::Model m;
  m.algorithm = "random";
  m.H.resize(n_out, n_meas);
  for (Eigen::Index i = 0; i < m.H.size(); ++i) m.H.data()[i] = rng.next();
  m.v_ref.resize(n_meas);
  for (size_t i = 0; i < n_meas; ++i) m.v_ref[i] = 1.0 + 0.5 * rng.next();
  m.normalize = true;
  return m;
}

void fill_values(pipeline::FramePool& pool, const recon::Model& m, uint64_t seed) {
  Rng rng{seed | 1};
  for (size_t i = 0; i < pool.size(); ++i)
    for (size_t j = 0; j < m.n_meas(); ++j)
      pool.slot(i).values[j] = static_cast<float>(m.v_ref[j] * (1 + 0.05 * rng.next()));
}

// A pool in r's own frame memory, bound to r, with random frames (destroy it before r).
std::unique_ptr<pipeline::FramePool> backend_pool(pipeline::Reconstructor& r, size_t slots,
                                                  const recon::Model& m, uint64_t seed) {
  auto pool =
      std::make_unique<pipeline::FramePool>(slots, m.n_meas(), m.n_out(), r.frame_allocator());
  r.bind_frames(*pool);
  fill_values(*pool, m, seed);
  return pool;
}

int64_t spin_until(int64_t t) {
  int64_t now;
  while ((now = pipeline::now_ns()) < t) {
  }
  return now;
}

// One frame host-to-host through a backend: submit, complete(wait).
struct BackendFrame {
  pipeline::Reconstructor& r;
  pipeline::FramePool& pool;
  std::vector<pipeline::FrameSlot*> out;
  size_t next = 0;
  BackendFrame(pipeline::Reconstructor& rr, pipeline::FramePool& p)
      : r(rr), pool(p), out(rr.max_batch()) {}
  void operator()() {
    pipeline::FrameSlot* s = &pool.slot(next++ % pool.size());
    s->flags = 0;
    pipeline::FrameSlot* batch[] = {s};
    if (!r.submit(batch) || r.complete(out, true) != 1) throw std::runtime_error("frame lost");
  }
};

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

// Frames scheduled at `rate_hz`; latency from the scheduled time to the image on the host.
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

std::string mode_name(Mode m) {
  return m == Mode::kAuto ? "auto" : m == Mode::kLaunch ? "launch" : "persistent";
}

struct Size {
  size_t n_out, n_meas, max_batch;
  int iters;
  bool paced;
};

void bench_size(const Size& z, const Bandwidth& bw, bool quick) {
  const int iters = quick ? std::max(200, z.iters / 10) : z.iters;
  emit("\n### {} × {} (H {:.1f} MB float32)\n", z.n_out, z.n_meas, z.n_out * z.n_meas * 4 / 1e6);
  const recon::Model model = make_model(z.n_out, z.n_meas, 0x5eed + z.n_out);
  const size_t in_flight = 4;
  const size_t batch_slots = (in_flight + 1) * z.max_batch, frame_slots = 64;
  pipeline::FramePool host_pool(1, z.n_meas, z.n_out);  // the naive reference's input
  fill_values(host_pool, model, 7);

  emit("Single frame, host to host (µs), {} frames each:\n", iters);
  emit("| variant | p50 | p99 | p99.9 | max | frames/s | p50 vs naive |");
  emit("|---|---|---|---|---|---|---|");
  double naive_p50 = 0;
  {
    NaiveReference naive(model.H.data(), z.n_out, z.n_meas, z.max_batch);
    std::memcpy(naive.values(0), host_pool.slot(0).values, z.n_meas * 4);
    auto s = summarize(time_frames([&] { naive.frame(); }, iters));
    naive_p50 = s.p50_us;
    emit("| naive: copy → cublasSgemv → copy → sync | {} | {:.0f} | 1.00 |", cells(s),
         1e6 / s.mean_us);
    s = summarize(time_frames([&] { naive.frame_graph(); }, iters));
    emit("| naive as one CUDA graph | {} | {:.0f} | {:.2f} |", cells(s), 1e6 / s.mean_us,
         naive_p50 / s.p50_us);
  }
  struct Variant {
    std::string label;
    CudaOptions o;
  };
  std::vector<Variant> variants;
  auto add = [&](std::string label, Mode mode, int blocks, Precision p) {
    CudaOptions o;
    o.max_batch = z.max_batch;
    o.max_in_flight = in_flight;
    o.mode = mode;
    o.persistent_blocks = std::max(blocks, 0);
    o.fuse_single_frame = blocks < 0;
    o.precision = p;
    variants.push_back({std::move(label), o});
  };
  add("backend launch (prepare + rows kernels)", Mode::kLaunch, 0, kFloat32);
  add("backend launch, one fused kernel (every block reads v)", Mode::kLaunch, -1, kFloat32);
  add("backend persistent (auto blocks)", Mode::kPersistent, 0, kFloat32);
  if (z.n_out <= 4096) {
    for (int b : {16, 64, 132})
      add(fmt::format("backend persistent, {} blocks", b), Mode::kPersistent, b, kFloat32);
  }
  add("backend auto, bf16 H", Mode::kAuto, 0, kBf16);
  for (const Variant& v : variants) {
    auto r = make_cuda_reconstructor(model, v.o);
    auto pool = backend_pool(*r, frame_slots, model, 7);
    BackendFrame frame(*r, *pool);
    const auto s = summarize(time_frames(std::ref(frame), iters));
    const auto st = cuda_stats(*r);
    emit("| {}{} | {} | {:.0f} | {:.2f} |", v.label,
         st.persistent_enabled ? fmt::format(" [{} blocks]", st.persistent_blocks) : "", cells(s),
         1e6 / s.mean_us, naive_p50 / s.p50_us);
  }

  emit(
      "\nBatched throughput (backend auto, {} batches in flight) vs naive (one stream, copy → "
      "Sgemm → copy → sync) and the PCIe bound ({:.1f} GB/s D2H ÷ {} B per image = {:.2f} M "
      "frames/s):\n",
      in_flight, bw.d2h_gbs, z.n_out * 4, bw.d2h_gbs * 1e9 / (z.n_out * 4) / 1e6);
  // "own kernel" / "cuBLAS": the same backend with every batch forced down one path, for the
  // sizes where the own kernel is an option (H in L2), to place the automatic threshold.
  const bool both_paths = z.n_out <= 4096;
  emit("| batch | backend frames/s | naive frames/s | backend ÷ naive | backend ÷ PCIe bound |{}",
       both_paths ? " own kernel frames/s | cuBLAS path frames/s |" : "");
  emit("|---|---|---|---|---|{}", both_paths ? "---|---|" : "");
  {
    CudaOptions o;
    o.max_batch = z.max_batch;
    o.max_in_flight = in_flight;
    auto r = make_cuda_reconstructor(model, o);
    if (!cuda_stats(*r).batch_fallback.empty())
      emit("(cuBLAS failed at warm-up, batches use the own kernel: {})",
           cuda_stats(*r).batch_fallback);
    auto pool_owner = backend_pool(*r, batch_slots, model, 7);
    pipeline::FramePool& pool = *pool_owner;
    std::unique_ptr<pipeline::Reconstructor> own, blas;
    std::unique_ptr<pipeline::FramePool> own_pool, blas_pool;
    if (both_paths) {
      CudaOptions oo = o;
      oo.mode = Mode::kLaunch;
      oo.own_kernel_max_batch = std::min<size_t>(z.max_batch, 256);
      own = make_cuda_reconstructor(model, oo);
      own_pool = backend_pool(*own, batch_slots, model, 7);
      oo.own_kernel_max_batch = 1;
      blas = make_cuda_reconstructor(model, oo);
      blas_pool = backend_pool(*blas, batch_slots, model, 7);
    }
    NaiveReference naive(model.H.data(), z.n_out, z.n_meas, z.max_batch);
    const double bound = bw.d2h_gbs * 1e9 / (z.n_out * 4);
    for (size_t b = 1; b <= z.max_batch; b *= 4) {
      std::string extra;
      if (both_paths) {
        const double secs = quick ? 0.05 : 0.15;
        extra = fmt::format(
            " {} | {:.0f} |",
            b <= 256 ? fmt::format("{:.0f}", backend_throughput(*own, *own_pool, b, secs)) : "-",
            backend_throughput(*blas, *blas_pool, b, secs));
      }
      const double fps = backend_throughput(*r, pool, b, quick ? 0.05 : 0.25);
      size_t n = 0;
      const int64_t t0 = pipeline::now_ns();
      while (pipeline::now_ns() - t0 < (quick ? 5e7 : 2.5e8) || n < 8 * b) {
        naive.batch(b);
        n += b;
      }
      const double naive_fps = n / ((pipeline::now_ns() - t0) * 1e-9);
      emit("| {} | {:.0f} | {:.0f} | {:.2f} | {:.0f}% |{}", b, fps, naive_fps, fps / naive_fps,
           100 * fps / bound, extra);
      if (b * 4 > z.max_batch && b != z.max_batch) b = z.max_batch / 4;
    }
  }

  if (!z.paced) return;
  emit("\nPaced arrival (latency from the scheduled time, µs):\n");
  emit("| rate | variant | p50 | p99 | p99.9 | max |");
  emit("|---|---|---|---|---|---|");
  for (double rate : {1000.0, 2500.0}) {
    const int frames = static_cast<int>(rate * (quick ? 0.2 : 1.0));
    {
      NaiveReference naive(model.H.data(), z.n_out, z.n_meas, 1);
      std::memcpy(naive.values(0), host_pool.slot(0).values, z.n_meas * 4);
      emit("| {:.0f} Hz | naive | {} |", rate,
           cells(summarize(paced([&] { naive.frame(); }, rate, frames))));
    }
    for (Mode mode : {Mode::kLaunch, Mode::kAuto}) {
      CudaOptions o;
      o.max_batch = 16;
      o.mode = mode;
      auto r = make_cuda_reconstructor(model, o);
      auto pool = backend_pool(*r, frame_slots, model, 7);
      BackendFrame frame(*r, *pool);
      emit("| {:.0f} Hz | backend {} | {} |", rate, mode_name(mode),
           cells(summarize(paced(std::ref(frame), rate, frames))));
    }
  }
}

// 8 threads, each its own backend and frames at `rate` Hz, sharing the GPU.
void bench_shared(size_t n_out, size_t n_meas, double rate, bool quick) {
  const recon::Model model = make_model(n_out, n_meas, 99);
  const int frames = static_cast<int>(rate * (quick ? 0.2 : 1.0));
  constexpr int kStreams = 8;
  for (int variant = 0; variant < 3; ++variant) {
    std::vector<std::vector<int64_t>> lat(kStreams);
    std::vector<std::thread> threads;
    std::vector<std::string> errors(kStreams);
    for (int t = 0; t < kStreams; ++t)
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
            o.mode = variant == 1 ? Mode::kLaunch : Mode::kAuto;
            auto r = make_cuda_reconstructor(model, o);
            auto pool = backend_pool(*r, 16, model, t + 1);
            BackendFrame frame(*r, *pool);
            lat[t] = paced(std::ref(frame), rate, frames);
          }
        } catch (const std::exception& e) {
          errors[t] = e.what();
        }
      });
    for (auto& th : threads) th.join();
    std::vector<int64_t> all;
    for (int t = 0; t < kStreams; ++t) {
      if (!errors[t].empty()) emit("stream {} failed: {}", t, errors[t]);
      all.insert(all.end(), lat[t].begin(), lat[t].end());
    }
    const char* name[] = {"naive", "backend launch", "backend auto (persistent)"};
    emit("| 8 × {:.0f} Hz | {} | {} |", rate, name[variant], cells(summarize(all)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_path, sizes_arg = "1024x208,4096x208,20000x928,200000x928";
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc)
      out_path = argv[++i];
    else if (a == "--sizes" && i + 1 < argc)
      sizes_arg = argv[++i];
    else if (a == "--quick")
      quick = true;
    else if (a == "--big")
      sizes_arg += ",1000000x928";
    else {
      std::fprintf(stderr, "usage: bench_cuda [--out FILE] [--sizes AxB,...] [--quick] [--big]\n");
      return 2;
    }
  }
  std::string why;
  if (!cuda_available(&why)) {
    std::printf("SKIPPED: bench_cuda: no CUDA device: %s\n", why.c_str());
    return 0;
  }
  emit("## bench_cuda\n\nDevice: {}\n", cuda_device_description());
  const Bandwidth bw = measure_pcie_bandwidth();
  emit(
      "PCIe (pinned, 256 MB cudaMemcpy, best of 5): host→device {:.1f} GB/s, device→host {:.1f} "
      "GB/s",
      bw.h2d_gbs, bw.d2h_gbs);
  try {
    for (size_t pos = 0; pos < sizes_arg.size();) {
      size_t end = sizes_arg.find(',', pos);
      if (end == std::string::npos) end = sizes_arg.size();
      const std::string tok = sizes_arg.substr(pos, end - pos);
      pos = end + 1;
      Size z{};
      if (std::sscanf(tok.c_str(), "%zux%zu", &z.n_out, &z.n_meas) != 2) continue;
      const double bytes = 4.0 * z.n_out * z.n_meas;
      z.max_batch = bytes <= 4e6 ? 4096 : z.n_out <= 20000 ? 1024 : 64;
      z.iters = bytes <= 4e6 ? 20000 : bytes <= 1e8 ? 5000 : 1000;
      z.paced = z.n_out == 1024 || z.n_out == 20000;
      bench_size(z, bw, quick);
    }
    emit("\n### 8 streams sharing the GPU (1024 × 208, 8 threads, each its own backend)\n");
    emit("| load | variant | p50 | p99 | p99.9 | max |");
    emit("|---|---|---|---|---|---|");
    bench_shared(1024, 208, 1000, quick);
    bench_shared(1024, 208, 2500, quick);
  } catch (const std::exception& e) {
    emit("\nbench_cuda failed: {}", e.what());
    if (!out_path.empty()) std::ofstream(out_path) << g_report;
    return 1;
  }
  if (!out_path.empty()) std::ofstream(out_path) << g_report;
  return 0;
}
