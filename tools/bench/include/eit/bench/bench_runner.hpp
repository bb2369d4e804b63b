#pragma once
// run_benchmark(): one benchmark run through the real streaming path —
//   SyntheticPhantomSource (replaying a fixed frame table, open loop: frame i due at t0 + i/rate)
//   → Pipeline (queues, reconstructor backend, publish stage)
//   → ZmqPublisher (PUB on inproc / ipc / tcp loopback; PUSH when lossless, so that a `max` run
//     counts delivered frames) → ImageSubscriber (SUB or PULL; busy-polling with
//     --latency-mode spin, like the pipeline's stages)
// with a StampSink after the publisher, so every frame's stamps land in a StampRecorder and the
// subscriber's receive times (a thread for inproc, a child process for ipc and tcp) join them.
// With RunConfig::cpu_request (--cpus) the run's threads are pinned (cpu_pinning.hpp) and
// RunConfig::cpus in the result says where each went and whether pinning succeeded. Spin mode:
// the source polls the clock for the whole frame period (PhantomOptions::kSpinWholeWait).
//
// Set-up errors throw (std::invalid_argument / std::runtime_error naming what failed); the run
// itself never throws through a stage: problems show up as counted drops and losses.
// Allocates everything before the source starts. Called from one thread.
#include <functional>
#include <memory>
#include <string>

#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/bench/run_result.hpp"
#include "eit/bench/stamp_recorder.hpp"
#include "eit/pipeline/host_allocator.hpp"
#include "eit/pipeline/pipeline_stats.hpp"
#include "eit/pipeline/reconstructor.hpp"
#include "eit/recon/model.hpp"

namespace eit::bench {

struct RunEnvironment {
  // Builds the backend named by RunConfig::backend for the model, with the given largest batch.
  std::function<std::unique_ptr<pipeline::Reconstructor>(const RunConfig&, const recon::Model&)>
      make_backend;
  std::string executable;  // eitstream itself, for the subscriber child (ipc, tcp)
  // Called about every 250 ms while the run is going (main thread), e.g. to print progress.
  std::function<void(const RunConfig&, const pipeline::PipelineStats&)> progress;
};

struct RunOutput {
  RunResult result;
  std::unique_ptr<StampRecorder> recorder;  // every frame's stamps, for --frames-csv
};

RunOutput run_benchmark(const recon::Model& model, const acquisition::PhantomTable& frames,
                        const RunConfig& config, const RunEnvironment& env);

}  // namespace eit::bench
