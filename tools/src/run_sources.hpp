#pragma once
// Recording sources for `eitstream run`, behind their own translation unit (acquisition's replay
// and live-device headers cannot share one yet: both declare a ComplexPart enum).
#include <memory>
#include <string>

#include "eit/acquisition/source.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::cli {

// A recording replayed at its own rate (fps < 0), at `fps`, or as fast as possible (fps = 0).
std::unique_ptr<acquisition::Source> open_replay_file(const std::string& path, double fps,
                                                      bool loop, const recon::Protocol& protocol);

}  // namespace eit::cli
