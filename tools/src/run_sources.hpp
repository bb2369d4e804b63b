#pragma once
// Recording and live-device sources for `eitstream run`.
#include <memory>
#include <string>

#include "eit/acquisition/replay_source.hpp"
#include "eit/pipeline/source.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::cli {

// A recording replayed at its own rate (fps < 0), at `fps`, or as fast as possible (fps = 0).
std::unique_ptr<pipeline::Source> open_replay_file(const std::string& path, double fps,
                                                      bool loop, const recon::Protocol& protocol);
// A recording with every replay option (format, variable, layout, speed, …).
std::unique_ptr<pipeline::Source> open_replay_file(const std::string& path,
                                                   const acquisition::ReplayOptions& options,
                                                   const recon::Protocol& protocol);
// A device streaming to a URI (tcp://, tcp-listen://, udp://, serial://, file://), or raw frames
// from NATS JetStream (nats://host:port?site=S&bed=B).
std::unique_ptr<pipeline::Source> open_live(const std::string& uri, double fps,
                                               const recon::Protocol& protocol);
// Throws, naming the URI, for a malformed device URI, an option its scheme does not take or a
// TLS file that cannot be used (acquisition::check_live_source_uri); opens nothing, so that
// `run` can say so before it loads the model.
void check_live_uri(const std::string& uri);

}  // namespace eit::cli
