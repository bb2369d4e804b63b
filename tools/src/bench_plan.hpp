#pragma once
// The plan of one `eitstream bench` invocation: its arguments, the axes of the run grid parsed
// and checked, and the list of runs (the grid, then the pyEIT comparison's runs). Set-up only, on
// the main thread before any run starts; errors throw CommandError naming the option, the value
// found and what is expected.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/bench/bench_report.hpp"
#include "eit/bench/pyeit_comparison.hpp"
#include "eit/bench/run_result.hpp"
#include "eit/recon/model.hpp"

#ifndef EIT_BENCH_SCRIPT_DIR
#define EIT_BENCH_SCRIPT_DIR "tools/bench"
#endif

namespace eit::cli {

struct BenchArgs {
  std::string rates = "50,1000,max";
  std::vector<std::string> models;
  std::string sizes;
  std::string backends = "cpu";
  std::string batches = "16";
  // --publish-batch: images per ZeroMQ message (comma-separated)
  std::string publish_batches = "1";
  std::string transports = "tcp";
  std::string policy = "auto";
  std::string stages = "auto";
  std::string latency_modes = "balanced";
  std::string wake_holds = "auto";     // --cpu-wake-hold: auto, on, off (comma-separated)
  std::string zmq_io_wakes = "preempt";  // --zmq-io-wake: preempt, defer (comma-separated)
  std::string zmq_sends = "lane";        // --zmq-send: lane, inline (comma-separated)
  std::string cuda_l2 = "on";  // --cuda-l2: on, off (comma-separated; CudaOptions::l2_persist)
  std::string zmq_reference = "auto";  // bare-ZeroMQ reference: on, off, auto (bench_reference.hpp)
  std::string host_noise = "auto";     // --host-noise: auto, off, SECONDS (bench_host_noise.hpp)
  std::string zmq_io_cpu = "sink";     // --zmq-io-cpu: sink, own, own-idle, any
  std::string cpus;  // --cpus: LIST or auto (eit/bench/cpu_pinning.hpp); empty: nothing pinned
  size_t frames = 1000;
  size_t warmup = 100;
  size_t cpu_threads = 1;
  size_t warm_us = eit::pipeline::kDefaultWarmIntervalUs;  // --warm-us (0: never)
  size_t source_poll_us = eit::bench::kDefaultSourcePollUs;  // --source-poll-us (0: sleep)
  std::string json, csv, svg, frames_csv;
  bool force = false;  // --force: replace existing output files
  bool quiet = false;
  bool compare_pyeit = false;
  size_t compare_frames = 1000;
  double compare_rate = 1000;
  std::string pyeit_script = std::string(EIT_BENCH_SCRIPT_DIR) + "/bench_vs_pyeit.py";
  std::string subscriber_only;
  size_t subscriber_capacity = 0;
  bool subscriber_pull = false, subscriber_spin = false;
  int subscriber_cpu = -1;
  int subscriber_io_cpu = -1;
};

struct NamedModel {
  std::string description;
  eit::recon::Model model;
};

// The axes of the benchmark grid, parsed and checked.
struct Axes {
  std::vector<NamedModel> models;
  std::vector<std::string> backends, transports, stages, latency_modes, wake_holds, cuda_l2,
      zmq_io_wakes, zmq_sends;
  std::vector<size_t> batches, publish_batches;
  std::vector<double> rates;
  eit::bench::CpuRequest cpus;  // the same for every run
};

struct Planned {
  const NamedModel* model;
  eit::bench::RunConfig config;
  bool comparison = false;  // a run on the pyEIT comparison's frame table
};

struct PyeitPart {
  std::optional<eit::bench::PyeitRun> pyeit;
  std::vector<NamedModel> models;  // reserved up front: plan entries point into it
  eit::acquisition::PhantomTable frames;
  size_t first_run = 0;
};

Axes parse_axes(const BenchArgs& a);
// --cpus: "" (nothing pinned), "auto", or a list checked as `eitstream run --cpus` checks it
// (cpu_list.hpp). auto is refused at once where the process may not use 2 CPUs (source and
// subscriber, the threads every run has); each run checks its own count when it starts.
eit::bench::CpuRequest parse_cpu_request(const std::string& text);
std::vector<Planned> plan_grid(const BenchArgs& a, const Axes& x);
// The pyEIT comparison: times pyEIT, then adds two eitstream runs per pyEIT matrix shape on the
// same frames (paced like pyEIT's latency loop, and at max like its frames/s loop).
void plan_pyeit(const BenchArgs& a, const Axes& x, PyeitPart& part, std::vector<Planned>& plan);
eit::bench::Comparison comparison_of(const BenchArgs& a, const PyeitPart& part);

}  // namespace eit::cli
