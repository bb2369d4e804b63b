#pragma once
// bench_cuda's plan: what to measure. The command line, the sizes (with their batch limits,
// iteration counts and whether the paced runs apply), the random models and frames, the
// single-frame variants and the batch sizes of the throughput table.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eit/gpu/cuda_backend.hpp"
#include "eit/pipeline/frame_pool.hpp"
#include "eit/recon/model.hpp"

namespace eit::gpu::bench {

struct Size {
  size_t n_out, n_meas, max_batch;
  int iters;   // single-frame iterations (a tenth with --quick, at least 200)
  bool paced;  // the paced-arrival table runs for this size
};

struct BenchPlan {
  std::string out_path;  // --out: the markdown report is also written here
  std::vector<Size> sizes;
  bool quick = false;
  bool batch_only = false;  // --batch-only: only the batched throughput tables
  bool single_only = false;  // --single-only: only the single-frame tables
};

// nullopt (after printing the usage to stderr) on an unknown argument.
std::optional<BenchPlan> parse_plan(int argc, char** argv);

// n_out × n_meas random H in [-0.5, 0.5), v_ref in [0.75, 1.25), normalised.
recon::Model make_model(size_t n_out, size_t n_meas, uint64_t seed);
// Every slot's values: v_ref · (1 + 5 % noise).
void fill_values(pipeline::FramePool& pool, const recon::Model& m, uint64_t seed);
// A pool in r's own frame memory, bound to r, with random frames (destroy it before r).
std::unique_ptr<pipeline::FramePool> backend_pool(pipeline::Reconstructor& r, size_t slots,
                                                  const recon::Model& m, uint64_t seed);

// The single-frame variants of the backend measured against the naive reference.
struct Variant {
  std::string label;
  CudaOptions options;
};
std::vector<Variant> single_frame_variants(const Size& z, size_t in_flight);

// 1, 4, 16, … up to max_batch, whose last entry is max_batch itself.
std::vector<size_t> batch_sizes(size_t max_batch);

}  // namespace eit::gpu::bench
