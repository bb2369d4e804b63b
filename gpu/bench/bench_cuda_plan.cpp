// bench_cuda's plan (see bench_cuda_plan.hpp).
#include "bench_cuda_plan.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

namespace eit::gpu::bench {
namespace {

using Mode = CudaOptions::Mode;

struct Rng {  // xorshift64*: fast enough to fill a 0.7 GB matrix
  uint64_t s;
  float next() {
    s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
    return static_cast<float>(static_cast<int64_t>(s * 0x2545F4914F6CDD1Dull) >> 11) * 0x1p-52f;
  }
};

}  // namespace

std::optional<BenchPlan> parse_plan(int argc, char** argv) {
  BenchPlan plan;
  std::string sizes_arg = "1024x208,4096x208,20000x928,200000x928";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) {
      plan.out_path = argv[++i];
    } else if (a == "--sizes" && i + 1 < argc) {
      sizes_arg = argv[++i];
    } else if (a == "--quick") {
      plan.quick = true;
    } else if (a == "--batch-only") {
      plan.batch_only = true;
    } else if (a == "--single-only") {
      plan.single_only = true;
    } else if (a == "--big") {
      sizes_arg += ",1000000x928";
    } else {
      std::fprintf(stderr,
                   "usage: bench_cuda [--out FILE] [--sizes AxB,...] [--quick] [--batch-only | "
                   "--single-only] [--big]\n");
      return std::nullopt;
    }
  }
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
    plan.sizes.push_back(z);
  }
  return plan;
}

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

std::unique_ptr<pipeline::FramePool> backend_pool(pipeline::Reconstructor& r, size_t slots,
                                                  const recon::Model& m, uint64_t seed) {
  auto pool =
      std::make_unique<pipeline::FramePool>(slots, m.n_meas(), m.n_out(), r.frame_allocator());
  r.bind_frames(*pool);
  fill_values(*pool, m, seed);
  return pool;
}

std::vector<Variant> single_frame_variants(const Size& z, size_t in_flight) {
  using Kernel = CudaOptions::PersistentKernel;
  std::vector<Variant> variants;
  auto options = [&](Mode mode, Precision p) {
    CudaOptions o;
    o.max_batch = z.max_batch;
    o.max_in_flight = in_flight;
    o.mode = mode;
    o.precision = p;
    return o;
  };
  auto add = [&](std::string label, Mode mode, int blocks, Precision p,
                 Kernel kernel = Kernel::kAuto) {
    CudaOptions o = options(mode, p);
    o.persistent_blocks = std::max(blocks, 0);
    o.persistent_kernel = kernel;
    o.fuse_single_frame = blocks < 0;
    variants.push_back({std::move(label), o});
  };
  add("backend launch (prepare + rows kernels)", Mode::kLaunch, 0, kFloat32);
  add("backend launch, one fused kernel (every block reads v)", Mode::kLaunch, -1, kFloat32);
  add("backend persistent (auto)", Mode::kPersistent, 0, kFloat32);
  if (z.n_out <= 4096) {
    add("backend persistent, one cluster (auto blocks)", Mode::kPersistent, 0, kFloat32,
        Kernel::kCluster);
    add("backend persistent, one cluster, 8 blocks", Mode::kPersistent, 8, kFloat32,
        Kernel::kCluster);
    add("backend persistent, relay (auto blocks)", Mode::kPersistent, 0, kFloat32, Kernel::kRelay);
    for (int b : {16, 64, 132})
      add(fmt::format("backend persistent, relay, {} blocks", b), Mode::kPersistent, b, kFloat32,
          Kernel::kRelay);
  }
  if (z.n_out > 4096) {
    // The launched rows kernel's shape for matrices the automatic mode launches, beside the
    // automatic one above: rows per block (whole passes of 32 or 64 rows, or not) and rows per
    // warp (docs/gpu-notes.md, run 14).
    auto add_rows = [&](int rows_per_block, int rows_per_warp, Precision p) {
      const int blocks = static_cast<int>((z.n_out + rows_per_block - 1) / rows_per_block);
      CudaOptions o = options(Mode::kLaunch, p);
      o.launch_blocks = blocks;
      o.launch_rows_per_warp = rows_per_warp;
      variants.push_back(
          {fmt::format("backend launch{}, {} blocks of {} rows, {} rows per warp",
                       p == kBf16 ? ", bf16 H" : "", blocks, rows_per_block, rows_per_warp),
           o});
    };
    for (int rows : {40, 64, 128}) add_rows(rows, 4, kFloat32);
    for (int rows : {64, 80, 128}) add_rows(rows, 8, kFloat32);
    for (int rows : {40, 64, 128}) add_rows(rows, 4, kBf16);
    for (int rows : {64, 128}) add_rows(rows, 8, kBf16);
    // H kept in persisting L2 (the default, CudaOptions::l2_persist) against streamed from HBM.
    CudaOptions streamed = options(Mode::kLaunch, kFloat32);
    streamed.l2_persist = false;
    variants.push_back({"backend launch (prepare + rows kernels), H not kept in L2", streamed});
    streamed.precision = kBf16;
    variants.push_back({"backend launch, bf16 H, H not kept in L2", streamed});
  }
  add("backend auto, bf16 H", Mode::kAuto, 0, kBf16);
  return variants;
}

std::vector<size_t> batch_sizes(size_t max_batch) {
  std::vector<size_t> out;
  for (size_t b = 1; b <= max_batch; b *= 4) {
    out.push_back(b);
    if (b * 4 > max_batch && b != max_batch) b = max_batch / 4;
  }
  return out;
}

}  // namespace eit::gpu::bench
