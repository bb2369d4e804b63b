#include "command_registry.hpp"
#include "eit/acquisition/live_source.hpp"
#include "run_nats.hpp"
#include "run_sources.hpp"

namespace eit::cli {

std::unique_ptr<pipeline::Source> open_live(const std::string& uri, double fps,
                                               const recon::Protocol& protocol) {
  if (is_nats_uri(uri)) return open_nats(uri, fps, protocol);
  acquisition::LiveSourceOptions o;
  if (fps > 0) o.nominal_rate_hz = fps;
  try {
    return acquisition::open_live_source(uri, o, protocol);
  } catch (const acquisition::SourceUnavailable& e) {
    // The same status as a device that stops sending: scripts tell "device gone" from "wrong
    // command" (1) by it.
    throw CommandError(std::string("source failed: ") + e.what(), 5);
  }
}

void check_live_uri(const std::string& uri) {
  if (!is_nats_uri(uri)) acquisition::check_live_source_uri(uri, "nats://");
}

}  // namespace eit::cli
