#pragma once
// Raw frames through NATS. A device gateway (`eitstream emulate --to nats://…`) publishes each
// frame, in eitstream's ingest framing (docs/protocol.md), as one JetStream message on
// eit.<site>.<bed>.raw; `eitstream run --source nats://…?site=S&bed=B` consumes them through a
// durable pull consumer (acknowledged as each frame is decoded; a restarted consumer resumes where
// it stopped), optionally from a point in history (`since=` seconds since the epoch, or `all`).
// A gateway sending integer samples states their scale on each frame (header Eit-Scale: X), and
// the readers and the worker multiply them by it; for frames that state none the readers take
// `scale=X` from their URI (the live sources' scale=), else 1.
//
// Both are the ordinary live-link interfaces, so the decoder's checks (CRCs, lengths, sequence
// gaps) apply unchanged. With model=NAME in the gateway's URI each raw message carries the header
// Eit-Model: NAME, which `eitstream worker` uses to pick the bed's model; with a frame rate, the
// header Eit-Rate: HZ, which the worker states in the bed's series message and `run --source`
// takes as its nominal rate (frames of gateways that send none have an unknown rate, 0). Set-up
// throws naming the URI and the server.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eit/acquisition/device_link.hpp"
#include "eit/acquisition/live_source.hpp"
#include "eit/nats/nats_address.hpp"
#include "eit/pipeline/source.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::nats {

// The message header naming a raw frame's model (`emulate --to 'nats://…?model=NAME'`).
inline constexpr const char* kModelHeader = "Eit-Model";
// The message header giving the rate, in frames per second, the device measures frames at.
inline constexpr const char* kRateHeader = "Eit-Rate";
// The message header giving the scale of a frame's integer samples (i16/i32 carry value / scale).
inline constexpr const char* kScaleHeader = "Eit-Scale";

// An Eit-Rate header's value in Hz; 0 (unknown) when absent (nullptr) or not a positive number.
double frame_rate_from_header(const char* value) noexcept;

// The gateway keeps up to `slots` frames of at most max_message_bytes until JetStream stored
// them (in order, each once: a frame refused or not acknowledged in ack_wait_ms is sent again,
// e.g. while a cluster re-elects the stream's leader); send() drops a frame when all are taken.
struct NatsDeviceLinkOptions {
  size_t slots = 1024;
  size_t max_message_bytes = 16 * 1024;
  int64_t ack_wait_ms = 2000;
  double rate_hz = 0;        // > 0: every frame carries Eit-Rate (the device's measurement rate)
  double integer_scale = 0;  // > 0: every frame carries Eit-Scale (its integer samples' scale)
};

std::unique_ptr<acquisition::DeviceLink> open_nats_device_link(std::string_view uri,
                                                               NatsDeviceLinkOptions options = {});

// What a gateway's publisher did, for its summary; nullopt when `link` is not a NATS gateway.
struct NatsGatewayStats {
  uint64_t stored = 0;      // frames JetStream acknowledged
  uint64_t failures = 0;    // publishes refused or not acknowledged in time (each sent again)
  uint64_t resent = 0;      // publishes of a frame sent before
  uint64_t duplicates = 0;  // resent frames the stream already had (kept once)
  uint64_t reordered = 0;   // frames stored after a later one
  uint64_t reconnects = 0;  // connections regained after a loss (nothing is sent while down)
};
std::optional<NatsGatewayStats> nats_gateway_stats(const acquisition::DeviceLink& link);

// The bed a raw-frame reader's URI names (`run --source`, `reconstruct`): as
// parse_nats_subscriber_address, with the readers' own option scale= allowed.
NatsAddress raw_reader_address(std::string_view uri);

// A bed's raw frames replayed from JetStream (`reconstruct nats://…?site=S&bed=B&since=…`): an
// ordered consumer (nothing acknowledged, nothing left on the server) from since=all (default) or
// since=<seconds since the epoch>, ending once it has caught up with the stream (the last frame
// delivered says none is pending, or nothing came for idle_ms). Its nominal rate is chosen as
// open_nats_source's, from the first frame the replay delivers (else the last one stored).
std::unique_ptr<pipeline::Source> open_nats_replay_source(
    std::string_view uri, const acquisition::LiveSourceOptions& options,
    const recon::Protocol& protocol, int64_t idle_ms = 2000,
    std::vector<std::string>* warnings = nullptr);

// A bed's raw frames through its durable consumer (`run --source nats://…`). Its nominal rate is
// options.nominal_rate_hz (--fps) when given, else the Eit-Rate of the bed's frames at set-up: the
// first one the consumer delivers, else the last one stored (0: none states a rate). When both are
// known and differ, --fps wins and `warnings` (if given) gets a line saying so.
std::unique_ptr<pipeline::Source> open_nats_source(std::string_view uri,
                                                   const acquisition::LiveSourceOptions& options,
                                                   const recon::Protocol& protocol,
                                                   std::vector<std::string>* warnings = nullptr);

}  // namespace eit::nats
