#pragma once
// The pipeline's state as `run --http` shows it in the live view's source panel (/api/state's
// "source", docs/protocol.md): counts, latency, the device's losses, each sink's own and the
// source's set-up warnings.
#include <string>
#include <vector>

#include "eit/pipeline/pipeline_stats.hpp"

namespace eit::cli {

// Frames lost before the sinks are one count ("dropped"); each sink's sent and dropped follow
// it in "sinks", since a frame two sinks missed is one frame, not two. `warnings`: what opening the
// source found (a replay's truncated file, header row, …): not in the source's last_error, which
// is for problems while it runs, so the page would not show them otherwise.
std::string pipeline_status_json(const pipeline::PipelineStats& s,
                                 const std::vector<std::string>& warnings = {});

}  // namespace eit::cli
