// RunConfig → PipelineOptions (run_pipeline_options.hpp).
#include "run_pipeline_options.hpp"

#include <algorithm>
#include <exception>
#include <string>

#include <unistd.h>

#include <fmt/format.h>

#include "command_registry.hpp"

namespace eit::cli {
namespace {

// --latency-mode, --stages and --cpus onto the pipeline's options.
void apply_latency_options(const RunConfig& c, pipeline::PipelineOptions& o) {
  if (c.latency_mode == "spin")
    o.latency_mode = pipeline::LatencyMode::kSpin;
  else if (c.latency_mode == "balanced")
    o.latency_mode = pipeline::LatencyMode::kBalanced;
  else if (c.latency_mode == "idle")
    o.latency_mode = pipeline::LatencyMode::kIdle;
  else
    throw CommandError(
        fmt::format("--latency-mode '{}': expected spin, balanced or idle", c.latency_mode));
  if (c.stages == "auto")
    o.stages = pipeline::StageLayout::kAuto;
  else if (c.stages == "pipelined")
    o.stages = pipeline::StageLayout::kPipelined;
  else if (c.stages == "run-to-completion")
    o.stages = pipeline::StageLayout::kRunToCompletion;
  else
    throw CommandError(
        fmt::format("--stages '{}': expected auto, pipelined or run-to-completion", c.stages));
  const long n_cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t pos = 0;
  while (pos < c.cpus.size()) {
    const size_t comma = std::min(c.cpus.find(',', pos), c.cpus.size());
    const std::string item = c.cpus.substr(pos, comma - pos);
    int cpu = -1;
    try {
      size_t used = 0;
      cpu = std::stoi(item, &used);
      if (used != item.size()) cpu = -1;
    } catch (const std::exception&) {
    }
    if (cpu < 0 || cpu >= n_cpus)
      throw CommandError(fmt::format("--cpus '{}': '{}' is not a CPU number in 0..{}", c.cpus,
                                     item, n_cpus - 1));
    o.cpus.push_back(cpu);
    pos = comma + 1;
  }
}

}  // namespace

pipeline::PipelineOptions run_pipeline_options(const RunConfig& c, const ReferenceChoice& ref) {
  pipeline::PipelineOptions o;
  o.policy = c.policy == "live" ? pipeline::Policy::kLive : pipeline::Policy::kLossless;
  o.queue_capacity = c.queue;
  o.max_batch = c.max_batch;
  o.max_frames = c.frames;
  o.warm_interval_us = static_cast<int64_t>(c.warm_us);
  o.reference = ref.options;
  if (c.normalize) o.normalize = 1;
  apply_latency_options(c, o);
  return o;
}

}  // namespace eit::cli
