#pragma once
// Raw frames through NATS. A device gateway (`eitstream emulate --to nats://…`) publishes each
// frame, in eitstream's ingest framing (docs/protocol.md), as one JetStream message on
// eit.<site>.<bed>.raw; `eitstream run --source nats://…?site=S&bed=B` consumes them through a
// durable pull consumer (acknowledged as each frame is decoded; a restarted consumer resumes where
// it stopped), optionally from a point in history (`since=` seconds since the epoch, or `all`).
//
// Both are the ordinary live-link interfaces, so the decoder's checks (CRCs, lengths, sequence
// gaps) apply unchanged. With model=NAME in the gateway's URI each raw message carries the header
// Eit-Model: NAME, which `eitstream worker` uses to pick the bed's model. Set-up throws naming the
// URI and the server.
#include <memory>
#include <string_view>

#include "eit/acquisition/device_link.hpp"
#include "eit/acquisition/live_source.hpp"
#include "eit/pipeline/source.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::nats {

// The message header naming a raw frame's model (`emulate --to 'nats://…?model=NAME'`).
inline constexpr const char* kModelHeader = "Eit-Model";

std::unique_ptr<acquisition::DeviceLink> open_nats_device_link(std::string_view uri);

std::unique_ptr<pipeline::Source> open_nats_source(std::string_view uri,
                                                   const acquisition::LiveSourceOptions& options,
                                                   const recon::Protocol& protocol);

}  // namespace eit::nats
