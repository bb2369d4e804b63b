#include "run_nats.hpp"

#include <atomic>
#include <chrono>

#include <fmt/format.h>

#include "command_registry.hpp"
#if EIT_HAVE_NATS
#include "eit/nats/nats_frames.hpp"
#include "eit/nats/nats_image_sink.hpp"
#include "eit/nats/server_wait.hpp"
#include "stop_signals.hpp"
#endif

namespace eit::cli {

bool is_nats_uri(const std::string& uri) noexcept {
  return uri.starts_with("nats://") || uri.starts_with("tls://");
}

#if EIT_HAVE_NATS

std::unique_ptr<pipeline::ImageSink> make_nats_sink(const std::string& uri,
                                                    const recon::Model& model,
                                                    const sinks::SeriesInfo& series) {
  nats::NatsSinkOptions o;
  o.series = series;
  // `run` counts signals from before its sinks open: one that comes while no NATS server answers
  // ends the wait, and the run, with 128 + the signal, as --help says of set-up.
  o.wait.give_up = [] { return stop_signals_received() > 0; };
  o.wait.report = [uri](const std::string& line) {
    fmt::print(stderr, "eitstream: --publish {}: {}\n", uri, line);
  };
  try {
    return std::make_unique<nats::NatsImageSink>(model, nats::parse_nats_publisher_address(uri), o);
  } catch (const std::exception& e) {
    if (stop_signals_received() == 0) throw;
    throw CommandError(fmt::format("--publish {}: {}", uri, e.what()), 128 + last_stop_signal());
  }
}

std::unique_ptr<pipeline::Source> open_nats(const std::string& uri, double fps,
                                            const recon::Protocol& protocol) {
  acquisition::LiveSourceOptions o;
  if (fps > 0) o.nominal_rate_hz = fps;
  std::vector<std::string> warnings;
  std::unique_ptr<pipeline::Source> source;
  try {
    source = nats::open_nats_source(uri, o, protocol, &warnings);
  } catch (const std::exception& e) {
    // Gave up waiting for a server: a signal ends run as --help says of set-up, the deadline
    // (--source-timeout) is a source that failed.
    if (stop_signals_received() > 0)
      throw CommandError(fmt::format("--source {}: {}", uri, e.what()), 128 + last_stop_signal());
    if (nats_wait_timed_out())
      throw CommandError(fmt::format("source failed: {}: {}", uri, e.what()), 5);
    throw;
  }
  for (const auto& w : warnings) fmt::print(stderr, "eitstream: warning: {}\n", w);
  return source;
}

std::unique_ptr<acquisition::DeviceLink> open_nats_link(const std::string& uri,
                                                        size_t max_message_bytes, double rate_hz,
                                                        double integer_scale) {
  nats::NatsDeviceLinkOptions o;
  o.max_message_bytes = max_message_bytes;
  o.rate_hz = rate_hz;
  o.integer_scale = integer_scale;
  return nats::open_nats_device_link(uri, o);
}

void check_nats_link_uri(const std::string& uri) { nats::parse_nats_publisher_address(uri); }

std::string nats_stop_wait(const pipeline::ImageSink& sink) {
  const auto* n = dynamic_cast<const nats::NatsImageSink*>(&sink);
  if (!n) return {};
  const auto s = n->nats_stats();
  // Connected, the few images in flight are stored in milliseconds: nothing worth a line.
  if (s.backlog == 0 || s.connected) return {};
  return fmt::format(
      "waiting up to {:g} s for NATS to store {} images (the server is "
      "disconnected)",
      static_cast<double>(n->end_timeout_ms()) / 1000, s.backlog);
}

std::string nats_status(const pipeline::ImageSink& sink) {
  const auto* n = dynamic_cast<const nats::NatsImageSink*>(&sink);
  if (!n) return {};
  const auto s = n->nats_stats();
  std::string line = fmt::format("nats {} acked, {} dropped, backlog {}{}", s.acked,
                                 s.dropped_full + s.abandoned, s.backlog,
                                 s.connected ? "" : ", DISCONNECTED");
  if (s.ack_failures) line += fmt::format(", {} refused and sent again", s.ack_failures);
  if (s.reordered) line += fmt::format(", {} stored out of order", s.reordered);
  if (s.reconnects) line += fmt::format(", reconnects {}", s.reconnects);
  return line;
}

std::string nats_link_summary(const acquisition::DeviceLink& link) {
  const auto s = nats::nats_gateway_stats(link);
  if (!s) return {};
  std::string line = fmt::format(", JetStream stored {}", s->stored);
  if (s->failures)
    line += fmt::format(", {} refused and sent again ({} already stored)", s->failures,
                        s->duplicates);
  if (s->reordered) line += fmt::format(", {} stored out of order", s->reordered);
  // The link's own "disconnects" count TCP peers; a NATS gateway's are the server's.
  if (s->reconnects) line += fmt::format(", reconnects {}", s->reconnects);
  return line;
}

namespace {
std::atomic<bool> g_nats_wait_timed_out{false};
}  // namespace

void report_nats_server_waits(double give_up_after_s) {
  const auto start = std::chrono::steady_clock::now();
  nats::ServerWait wait;
  wait.report = [](const std::string& line) { fmt::print(stderr, "eitstream: {}\n", line); };
  wait.give_up = [start, give_up_after_s] {
    if (stop_signals_received() > 0) return true;
    const bool late = give_up_after_s > 0 && std::chrono::steady_clock::now() - start >
                                                 std::chrono::duration<double>(give_up_after_s);
    if (late) g_nats_wait_timed_out.store(true);
    return late;
  };
  nats::set_default_server_wait(std::move(wait));
}

bool nats_wait_timed_out() noexcept { return g_nats_wait_timed_out.load(); }

#else

namespace {
[[noreturn]] void unavailable(const std::string& uri) {
  throw CommandError(fmt::format("{}: this eitstream was built without NATS (libnats-dev)", uri));
}
}  // namespace

std::unique_ptr<pipeline::ImageSink> make_nats_sink(const std::string& uri, const recon::Model&,
                                                    const sinks::SeriesInfo&) {
  unavailable(uri);
}
void report_nats_server_waits(double) {}
bool nats_wait_timed_out() noexcept { return false; }
std::unique_ptr<pipeline::Source> open_nats(const std::string& uri, double,
                                            const recon::Protocol&) {
  unavailable(uri);
}
std::unique_ptr<acquisition::DeviceLink> open_nats_link(const std::string& uri, size_t, double,
                                                        double) {
  unavailable(uri);
}
void check_nats_link_uri(const std::string& uri) { unavailable(uri); }
std::string nats_status(const pipeline::ImageSink&) { return {}; }
std::string nats_stop_wait(const pipeline::ImageSink&) { return {}; }
std::string nats_link_summary(const acquisition::DeviceLink&) { return {}; }

#endif

}  // namespace eit::cli
