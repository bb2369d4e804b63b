#pragma once
// bench_cuda's measurements: single frames host to host, frames at a paced rate, batched
// throughput of a backend and of the naive reference, and 8 streams sharing the GPU. Each
// returns raw samples or a rate; formatting is bench_cuda_report's.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "eit/pipeline/frame_pool.hpp"
#include "eit/pipeline/reconstructor.hpp"
#include "naive_reference.hpp"

namespace eit::gpu::bench {

// One frame host-to-host through a backend: submit, complete(wait).
struct BackendFrame {
  pipeline::Reconstructor& r;
  pipeline::FramePool& pool;
  std::vector<pipeline::FrameSlot*> out;
  size_t next = 0;
  BackendFrame(pipeline::Reconstructor& rr, pipeline::FramePool& p)
      : r(rr), pool(p), out(rr.max_batch()) {}
  void operator()();
};

// Nanoseconds per frame for `iters` frames, after a warm-up.
std::vector<int64_t> time_frames(const std::function<void()>& frame, int iters);
// Frames scheduled at `rate_hz`; latency from the scheduled time to the image on the host.
std::vector<int64_t> paced(const std::function<void()>& frame, double rate_hz, int frames);
// Frames/s of batches of b slots taken from the pool, max_in_flight pending, for `seconds`.
double backend_throughput(pipeline::Reconstructor& r, pipeline::FramePool& pool, size_t b,
                          double seconds);
// Frames/s of naive.batch(b) back to back for `seconds` (at least 8 batches).
double naive_throughput(NaiveReference& naive, size_t b, double seconds);

// 8 threads, each its own backend (variant 1: launched, 2: auto) or naive reference (variant 0)
// and frames at `rate` Hz. Latencies of all streams; a stream's failure in errors[t].
struct SharedResult {
  std::vector<int64_t> latency_ns;
  std::vector<std::string> errors;  // one per stream, empty when it ran
};
inline constexpr int kSharedStreams = 8;
SharedResult shared_streams(size_t n_out, size_t n_meas, double rate, bool quick, int variant);

}  // namespace eit::gpu::bench
