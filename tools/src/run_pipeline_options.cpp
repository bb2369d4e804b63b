// RunConfig → PipelineOptions (run_pipeline_options.hpp).
#include "run_pipeline_options.hpp"

#include <optional>
#include <string>

#include <fmt/format.h>

#include "command_registry.hpp"
#include "cpu_list.hpp"

namespace eit::cli {
namespace {

// --latency-mode, --stages, --cpu-wake-hold and --cpus onto the pipeline's options.
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
  const std::optional<pipeline::WakeHold> hold = pipeline::wake_hold_from_name(c.cpu_wake_hold);
  if (!hold)
    throw CommandError(
        fmt::format("--cpu-wake-hold '{}': expected auto, on or off", c.cpu_wake_hold));
  o.wake_hold = *hold;
  o.cpus = parse_cpu_list(c.cpus);
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
