#pragma once
// The pipeline's state as `run --http` shows it in the live view's source panel (/api/state's
// "source", docs/protocol.md): counts, latency, the device's losses and each sink's own.
#include <string>

#include "eit/pipeline/pipeline_stats.hpp"

namespace eit::cli {

// Frames lost before the sinks are one count ("dropped"); each sink's sent and dropped follow
// it in "sinks", since a frame two sinks missed is one frame, not two.
std::string pipeline_status_json(const pipeline::PipelineStats& s);

}  // namespace eit::cli
