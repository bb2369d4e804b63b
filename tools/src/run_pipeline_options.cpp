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
  const std::optional<pipeline::LatencyMode> mode =
      pipeline::latency_mode_from_name(c.latency_mode);
  if (!mode)
    throw CommandError(
        fmt::format("--latency-mode '{}': expected spin, balanced or idle", c.latency_mode));
  o.latency_mode = *mode;
  const std::optional<pipeline::StageLayout> layout = pipeline::layout_from_name(c.stages);
  if (!layout)
    throw CommandError(
        fmt::format("--stages '{}': expected auto, pipelined or run-to-completion", c.stages));
  o.stages = *layout;
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
