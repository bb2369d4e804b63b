#pragma once
// The end of `eitstream run`: the final summary on stdout (pipeline counters, the publishers'
// health, each recorder's line, the replay's warnings, NATS) and the exit status:
//   0  every frame went where it should
//   3  the backend failed and frames were lost
//   4  lossless: frames (or the series-end) did not reach the consumer (said on stderr)
//   5  the device source failed (thrown as CommandError with the reason)
#include <string>
#include <vector>

#include "eit/pipeline/pipeline_stats.hpp"
#include "run_config.hpp"
#include "run_loop.hpp"
#include "run_sinks.hpp"

namespace eit::cli {

int finish_run(const RunConfig& c, const pipeline::PipelineStats& stats, const RunSinks& sinks,
               const std::vector<std::string>& warnings, const RunEnd& end);

}  // namespace eit::cli
