#pragma once
// NATS for the CLI: the image sink behind `run --publish nats://…`, raw frames from
// `run --source nats://…` and to `emulate --to nats://…`. In a build without libnats each
// says so instead.
#include <memory>
#include <string>

#include "eit/acquisition/device_link.hpp"
#include "eit/pipeline/image_sink.hpp"
#include "eit/pipeline/source.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/series_message.hpp"

namespace eit::cli {

bool is_nats_uri(const std::string& uri) noexcept;
// For every NATS connection this command makes from now on: while no server answers at set-up,
// a line on stderr after 1 s and every 10 s, and the set-up gives up (throws) on SIGINT/SIGTERM
// or, when `give_up_after_s` > 0, after that many seconds. Nothing in a build without NATS.
void report_nats_server_waits(double give_up_after_s);
// True when the last give-up was for the deadline (not a signal).
bool nats_wait_timed_out() noexcept;
std::unique_ptr<pipeline::ImageSink> make_nats_sink(const std::string& uri,
                                                    const recon::Model& model,
                                                    const sinks::SeriesInfo& series);
std::unique_ptr<pipeline::Source> open_nats(const std::string& uri, double fps,
                                            const recon::Protocol& protocol);
// max_message_bytes: the largest message the gateway sends (one frame); rate_hz: the rate the
// frames are measured at, integer_scale: their integer samples' scale, each stated on every frame
// (0: not stated).
std::unique_ptr<acquisition::DeviceLink> open_nats_link(const std::string& uri,
                                                        size_t max_message_bytes, double rate_hz,
                                                        double integer_scale);
// Throws what open_nats_link throws for a malformed URI (or a build without NATS), without
// connecting.
void check_nats_link_uri(const std::string& uri);
// "nats 123 acked, 4 dropped, backlog 0, reconnects 1" for the status line; empty for other sinks.
std::string nats_status(const pipeline::ImageSink& sink);
// At a stop with the server gone and images still buffered for JetStream: "waiting up to 5 s for
// NATS to store 167 images (the server is disconnected)"; empty otherwise and for other sinks.
std::string nats_stop_wait(const pipeline::ImageSink& sink);
// ", JetStream stored 600, 12 refused and sent again (3 already stored)" for emulate's summary;
// empty for other links.
std::string nats_link_summary(const acquisition::DeviceLink& link);

}  // namespace eit::cli
