// bench_cuda: the CUDA backend side by side with a naive cuBLAS reference, in one run on one GPU.
//   single-frame latency host-to-host (p50/p99/p99.9/max) for each variant; batched throughput
//   against the PCIe bound (image bytes ÷ device-to-host bandwidth measured in this run); latency
//   under paced arrival at 1 kHz and 2.5 kHz; 8 streams (threads, each its own backend) sharing
//   the GPU. Writes a markdown report to stdout and to --out FILE.
//   bench_cuda [--out FILE] [--sizes 1024x208,4096x208,20000x928,200000x928] [--quick]
//              [--batch-only] [--big]
// What to measure: bench_cuda_plan; how: bench_cuda_run; the tables: bench_cuda_report.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "bench_cuda_plan.hpp"
#include "bench_cuda_report.hpp"
#include "bench_cuda_run.hpp"
#include "bench_stats.hpp"
#include "eit/gpu/cuda_backend.hpp"
#include "naive_reference.hpp"

using namespace eit;
using namespace eit::gpu;
using namespace eit::gpu::bench;
using Mode = CudaOptions::Mode;

namespace {

constexpr size_t kInFlight = 4;
constexpr size_t kFrameSlots = 64;

// " [L2: …]": how much of H the backend keeps in persisting L2, where it keeps any.
std::string l2_kept(const CudaStats& st) {
  if (st.l2_persisting_bytes == 0) return "";
  return fmt::format(" [L2: {:.1f} of {:.1f} MiB of H, hit ratio {:.2f}]",
                     st.l2_persisting_bytes / 1048576.0, st.l2_window_bytes / 1048576.0,
                     st.l2_hit_ratio);
}

// " [...]": the kernel shape the backend chose where the variant left it automatic, and L2.
std::string shape_chosen(const CudaOptions& asked, const CudaStats& st) {
  if (st.persistent_enabled)
    return st.persistent_cluster ? fmt::format(" [one cluster of {} blocks]", st.persistent_blocks)
                                 : fmt::format(" [relay, {} blocks]", st.persistent_blocks);
  if (asked.launch_blocks > 0 || asked.fuse_single_frame) return l2_kept(st);
  return fmt::format(" [{} blocks, {} rows per warp]{}", st.launch_blocks, st.launch_rows_per_warp,
                     l2_kept(st));
}

void single_frame_section(Report& rep, const Size& z, const recon::Model& model,
                          pipeline::FramePool& host_pool, bool quick) {
  const int iters = quick ? std::max(200, z.iters / 10) : z.iters;
  rep.single_frame_header(iters);
  double naive_p50 = 0;
  {
    NaiveReference naive(model.H.data(), z.n_out, z.n_meas, z.max_batch);
    std::memcpy(naive.values(0), host_pool.slot(0).values, z.n_meas * 4);
    auto s = summarize(time_frames([&] { naive.frame(); }, iters));
    naive_p50 = s.p50_us;
    rep.single_frame_row("naive: copy → cublasSgemv → copy → sync", s, naive_p50);
    s = summarize(time_frames([&] { naive.frame_graph(); }, iters));
    rep.single_frame_row("naive as one CUDA graph", s, naive_p50);
  }
  for (const Variant& v : single_frame_variants(z, kInFlight)) {
    auto r = make_cuda_reconstructor(model, v.options);
    auto pool = backend_pool(*r, kFrameSlots, model, 7);
    BackendFrame frame(*r, *pool);
    const auto s = summarize(time_frames(std::ref(frame), iters));
    rep.single_frame_row(v.label + shape_chosen(v.options, cuda_stats(*r)), s, naive_p50);
  }
  if (z.n_out <= 4096) return;
  // Frames 1 ms apart, as a 1 kHz pipeline sends them (the GPU idles in between), timed from
  // each frame's due time: H kept in L2 or streamed.
  const int paced_frames = std::min(iters, 2000);
  for (const bool keep : {true, false}) {
    CudaOptions o;
    o.max_batch = z.max_batch;
    o.max_in_flight = kInFlight;
    o.l2_persist = keep;
    auto r = make_cuda_reconstructor(model, o);
    auto pool = backend_pool(*r, kFrameSlots, model, 7);
    BackendFrame frame(*r, *pool);
    const auto s = summarize(paced(std::ref(frame), 1000, paced_frames));
    rep.single_frame_row(
        fmt::format("backend auto, frames 1 ms apart{}{}", keep ? "" : ", H not kept in L2",
                    shape_chosen(o, cuda_stats(*r))),
        s, naive_p50);
  }
}

void batch_section(Report& rep, const Size& z, const recon::Model& model, const Bandwidth& bw,
                   bool quick) {
  const size_t batch_slots = (kInFlight + 1) * z.max_batch;
  // "own kernel" / "cuBLAS": the same backend with every batch forced down one path, for the
  // sizes where the own kernel is an option (H in L2), to place the automatic threshold.
  const bool both_paths = z.n_out <= 4096;
  rep.batch_header(kInFlight, bw, z.n_out, both_paths);
  CudaOptions o;
  o.max_batch = z.max_batch;
  o.max_in_flight = kInFlight;
  auto r = make_cuda_reconstructor(model, o);
  if (!cuda_stats(*r).batch_fallback.empty())
    rep.line("(cuBLAS failed at warm-up, batches use the own kernel: {})",
             cuda_stats(*r).batch_fallback);
  auto pool = backend_pool(*r, batch_slots, model, 7);
  // "values zero-copy": the same backend with prepare reading values and descriptors in place, as
  // before issue 9's run 10; "descriptors zero-copy": values staged, descriptors read in place, as
  // in run 10 (docs/gpu-notes.md). They show what each copy-engine transfer gives.
  CudaOptions oz = o;
  oz.stage_batch_values = false;
  auto zero_copy = make_cuda_reconstructor(model, oz);
  auto zero_copy_pool = backend_pool(*zero_copy, batch_slots, model, 7);
  CudaOptions od = o;  // descriptors read in place (the default before run 11)
  od.stage_batch_descriptors = false;
  auto zero_copy_descs = make_cuda_reconstructor(model, od);
  auto zero_copy_descs_pool = backend_pool(*zero_copy_descs, batch_slots, model, 7);
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
  for (size_t b : batch_sizes(z.max_batch)) {
    Report::BatchRow row{b, 0, 0, bound, 0, 0, 0, ""};
    if (both_paths) {
      const double secs = quick ? 0.05 : 0.15;
      row.extra = fmt::format(
          " {} | {:.0f} |",
          b <= 256 ? fmt::format("{:.0f}", backend_throughput(*own, *own_pool, b, secs)) : "-",
          backend_throughput(*blas, *blas_pool, b, secs));
    }
    row.zero_copy = backend_throughput(*zero_copy, *zero_copy_pool, b, quick ? 0.05 : 0.15);
    row.zero_copy_descs =
        backend_throughput(*zero_copy_descs, *zero_copy_descs_pool, b, quick ? 0.05 : 0.15);
    row.copy_alone =
        copy_down_rate(pool->image_stride() * sizeof(float), b, kInFlight, quick ? 0.05 : 0.15);
    row.backend = backend_throughput(*r, *pool, b, quick ? 0.05 : 0.25);
    row.naive = naive_throughput(naive, b, quick ? 0.05 : 0.25);
    rep.batch_row(row);
  }
}

void paced_section(Report& rep, const Size& z, const recon::Model& model,
                   pipeline::FramePool& host_pool, bool quick) {
  rep.paced_header();
  for (double rate : {1000.0, 2500.0}) {
    const int frames = static_cast<int>(rate * (quick ? 0.2 : 1.0));
    {
      NaiveReference naive(model.H.data(), z.n_out, z.n_meas, 1);
      std::memcpy(naive.values(0), host_pool.slot(0).values, z.n_meas * 4);
      rep.paced_row(rate, "naive", summarize(paced([&] { naive.frame(); }, rate, frames)));
    }
    for (Mode mode : {Mode::kLaunch, Mode::kAuto}) {
      CudaOptions o;
      o.max_batch = 16;
      o.mode = mode;
      auto r = make_cuda_reconstructor(model, o);
      auto pool = backend_pool(*r, kFrameSlots, model, 7);
      BackendFrame frame(*r, *pool);
      rep.paced_row(rate, mode == Mode::kLaunch ? "backend launch" : "backend auto",
                    summarize(paced(std::ref(frame), rate, frames)));
    }
  }
}

void size_sections(Report& rep, const Size& z, const Bandwidth& bw, const BenchPlan& plan) {
  rep.size_title(z.n_out, z.n_meas);
  const recon::Model model = make_model(z.n_out, z.n_meas, 0x5eed + z.n_out);
  pipeline::FramePool host_pool(1, z.n_meas, z.n_out);  // the naive reference's input
  fill_values(host_pool, model, 7);
  if (!plan.batch_only) single_frame_section(rep, z, model, host_pool, plan.quick);
  if (plan.single_only) return;
  batch_section(rep, z, model, bw, plan.quick);
  if (z.paced && !plan.batch_only) paced_section(rep, z, model, host_pool, plan.quick);
}

void shared_section(Report& rep, double rate, bool quick) {
  const char* name[] = {"naive", "backend launch", "backend auto (persistent)"};
  for (int variant = 0; variant < 3; ++variant) {
    const SharedResult res = shared_streams(1024, 208, rate, quick, variant);
    for (int t = 0; t < kSharedStreams; ++t)
      if (!res.errors[t].empty()) rep.line("stream {} failed: {}", t, res.errors[t]);
    rep.shared_row(rate, name[variant], summarize(res.latency_ns));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto plan = parse_plan(argc, argv);
  if (!plan) return 2;
  std::string why;
  if (!cuda_available(&why)) {
    std::printf("SKIPPED: bench_cuda: no CUDA device: %s\n", why.c_str());
    return 0;
  }
  Report rep;
  rep.header(cuda_device_description());
  const Bandwidth bw = measure_pcie_bandwidth();
  rep.bandwidth(bw);
  try {
    for (const Size& z : plan->sizes) size_sections(rep, z, bw, *plan);
    if (!plan->batch_only && !plan->single_only) {
      rep.shared_header();
      shared_section(rep, 1000, plan->quick);
      shared_section(rep, 2500, plan->quick);
    }
  } catch (const std::exception& e) {
    rep.line("\nbench_cuda failed: {}", e.what());
    rep.save(plan->out_path);
    return 1;
  }
  rep.save(plan->out_path);
  return 0;
}
