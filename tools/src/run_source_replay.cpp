#include "eit/acquisition/replay_source.hpp"
#include "run_sources.hpp"

namespace eit::cli {

std::unique_ptr<pipeline::Source> open_replay_file(const std::string& path, double fps,
                                                      bool loop, const recon::Protocol& protocol) {
  acquisition::ReplayOptions o;
  if (fps > 0) o.fps = fps;
  o.unpaced = fps == 0;
  o.loop = loop;
  return acquisition::open_recording(path, o, protocol);
}

std::unique_ptr<pipeline::Source> open_replay_file(const std::string& path,
                                                   const acquisition::ReplayOptions& options,
                                                   const recon::Protocol& protocol) {
  return acquisition::open_recording(path, options, protocol);
}

}  // namespace eit::cli
