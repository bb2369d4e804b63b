// `eitstream listen ENDPOINT`: subscribes to published images (or PULLs them with --pull),
// prints one line per image or a summary, measures end-to-end latency from the header's
// acquisition time (CLOCK_MONOTONIC: same host only), counts what was lost per series
// (listen_counts.hpp) and can save every image as .npy or raw float32 (listen_save.hpp).
#include <cerrno>
#include <cstdio>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "command_registry.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/latency_histogram.hpp"
#include "eit/sinks/image_batch.hpp"
#include "eit/sinks/image_header.hpp"
#include "eit/sinks/shm_layout.hpp"
#include "eit/sinks/zmq_link_monitor.hpp"
#include "listen_counts.hpp"
#include "listen_nats.hpp"
#include "listen_save.hpp"
#include "listen_shm.hpp"
#include "option_checks.hpp"
#include "run_security.hpp"
#include "stop_signals.hpp"

namespace eit::cli {
namespace {

// The largest image listen accepts by default: 1024×1024 pixels (a model's n_out is far below).
constexpr size_t kMaxImageFloats = size_t{1} << 20;

struct ListenOptions {
  std::string endpoint;
  bool pull = false;
  bool summary = false;
  uint64_t count = 0;
  std::string save_dir;
  std::string format = "npy";
  std::string topic = "eit/";
  bool exit_on_end = false;
  double timeout_s = 0;
  CurveClientOptions curve;
  int64_t max_message_bytes = 0;  // 0: kMaxImageFloats floats (4 MiB)
};

// Exit statuses besides 0, 1 (set-up) and 2 (command line); listen --help lists them.
constexpr int kExitCountNotReached = 3;
constexpr int kExitNotSaved = 4;

// A series-end message's series and frames_sent (absent from shm's own ends).
void note_series_end(const std::string& json, ListenCounts& counts) {
  const auto j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object() || !j.contains("series_id") || !j["series_id"].is_string()) return;
  uint64_t id = 0;
  try {
    id = std::stoull(j["series_id"].get<std::string>(), nullptr, 16);
  } catch (const std::exception&) {
    return;
  }
  std::optional<uint64_t> sent;
  if (j.contains("frames_sent") && j["frames_sent"].is_number_unsigned())
    sent = j["frames_sent"].get<uint64_t>();
  counts.on_series_end(id, sent);
}

// Waits up to 200 ms for a message, reading the link's events meanwhile: a change in what the
// link is (connected, or why not: a refused CURVE key, nothing listening…) is told on stderr at
// once, since without images nothing else would say it. False on timeout, and on a signal
// (EINTR), which the loop then sees.
bool receive(zmq::socket_t& socket, sinks::ZmqLinkMonitor& link, const std::string& endpoint,
             std::vector<zmq::message_t>& parts) {
  try {
    zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0},
                               {link.events().handle(), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, 2, std::chrono::milliseconds(200));
    if ((items[1].revents & ZMQ_POLLIN) && link.on_event()) {
      if (link.state() == sinks::LinkState::kConnected)
        fmt::print(stderr, "eitstream listen: connected to {}\n", endpoint);
      else if (!link.error().empty())
        fmt::print(stderr, "eitstream listen: {}: {}\n", endpoint, link.error());
    }
    if (!(items[0].revents & ZMQ_POLLIN)) return false;
    return zmq::recv_multipart(socket, std::back_inserter(parts), zmq::recv_flags::dontwait)
        .has_value();
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return false;
    throw CommandError(fmt::format("receiving: {}", e.what()));
  }
}

void listen(const ListenOptions& o) {
  std::optional<ImageSaver> saver;
  if (!o.save_dir.empty()) saver.emplace(o.save_dir, o.format);
  // nats://…?site=S&bed=B[&since=…]: the bed's images from JetStream, as ZeroMQ-shaped parts.
  std::unique_ptr<NatsListenFeed> nats_feed =
      is_nats_listen_uri(o.endpoint) ? open_nats_listen_feed(o.endpoint) : nullptr;
  // shm://NAME: a shared-memory ring on this host (listen_shm.hpp).
  std::unique_ptr<ShmListenFeed> shm_feed =
      sinks::is_shm_uri(o.endpoint) ? std::make_unique<ShmListenFeed>(o.endpoint) : nullptr;
  zmq::context_t ctx(1);
  zmq::socket_t socket(ctx, o.pull ? zmq::socket_type::pull : zmq::socket_type::sub);
  socket.set(zmq::sockopt::linger, 0);
  sinks::set_consumer_link_options(socket);
  // A publisher (or anyone in its place) cannot make this process allocate more than the largest
  // legitimate message: an image payload of kMaxImageFloats floats (or --max-message-bytes).
  socket.set(zmq::sockopt::maxmsgsize, o.max_message_bytes > 0
                                           ? o.max_message_bytes
                                           : static_cast<int64_t>(kMaxImageFloats * sizeof(float)));
  apply_curve_client_options(o.curve, socket);
  if (!o.pull) socket.set(zmq::sockopt::subscribe, o.topic);
  std::optional<sinks::ZmqLinkMonitor> link;
  try {
    if (!nats_feed && !shm_feed) {
      link.emplace(ctx, socket);
      socket.connect(o.endpoint);
    }
  } catch (const zmq::error_t& e) {
    throw CommandError(fmt::format("cannot connect to '{}': {}", o.endpoint, e.what()));
  }
  // From here SIGINT and SIGTERM end the loop; the summary and the exit status follow (and a
  // further signal cannot cut them short).
  const StopSignals stop;

  pipeline::LatencyHistogram latency;
  ListenCounts counts;
  uint64_t images = 0, bad = 0, series = 0, batches = 0;
  int64_t first_ns = 0, last_ns = 0;
  const int64_t deadline =
      o.timeout_s > 0 ? pipeline::now_ns() + static_cast<int64_t>(o.timeout_s * 1e9) : 0;
  bool ended = false;
  // One image, alone or from a batch: counts, latency, its line and its file.
  const auto on_image = [&](const sinks::ImageHeader& h, std::span<const std::byte> payload,
                            int64_t now) {
    if (o.count > 0 && images >= o.count) return;  // the rest of a batch past --count
    const Arrival arrival = counts.on_image(h.series_id, h.seq, h.dropped_before);
    latency.record(now - h.t_acquired_ns);
    if (!first_ns) first_ns = now;
    last_ns = now;
    ++images;
    if (!o.summary) {
      const auto* v = reinterpret_cast<const float*>(payload.data());
      float lo = v[0], hi = v[0];
      for (uint32_t i = 1; i < h.count; ++i) lo = std::min(lo, v[i]), hi = std::max(hi, v[i]);
      fmt::print(
          "seq {:>8}  {}  latency {:>9.1f} µs  dropped_before {}  flags 0x{:x}  min {:.4g} max "
          "{:.4g}{}\n",
          h.seq,
          h.ndim == 2 ? fmt::format("{}×{}", h.shape[0], h.shape[1])
                      : fmt::format("{}", h.shape[0]),
          static_cast<double>(now - h.t_acquired_ns) / 1e3, h.dropped_before, h.flags, lo, hi,
          arrival == Arrival::kNewSeries    ? fmt::format("  new series {:016x}", h.series_id)
          : arrival == Arrival::kDuplicate  ? "  duplicate"
          : arrival == Arrival::kOutOfOrder ? "  out of order"
                                            : "");
    }
    // A duplicate's file is on disk already: saving it again would be refused as existing.
    if (saver && arrival != Arrival::kDuplicate) saver->save(h, payload);
  };
  std::vector<zmq::message_t> parts;
  while (stop.count() == 0 && !ended && (o.count == 0 || images < o.count)) {
    if (deadline && pipeline::now_ns() > deadline) break;
    parts.clear();
    if (nats_feed  ? !nats_feed->next(parts, 200)
        : shm_feed ? !shm_feed->next(parts, 200)
                   : !receive(socket, *link, o.endpoint, parts))
      continue;  // timeout: re-check
    const int64_t now = pipeline::now_ns();
    const std::string topic = parts[0].to_string();
    if (topic.ends_with("/series") && parts.size() == 2) {
      ++series;
      const std::string json = parts[1].to_string();
      const bool end = json.find("\"series-end\"") != std::string::npos;
      if (!o.summary) fmt::print("{} {}\n", end ? "series-end" : "series", json.substr(0, 160));
      if (end) note_series_end(json, counts);
      if (end && o.exit_on_end) ended = true;
      continue;
    }
    const auto bytes = [](const zmq::message_t& m) {
      return std::span(static_cast<const std::byte*>(m.data()), m.size());
    };
    if (parts.size() == 3 && topic.ends_with(sinks::kImageBatchTopicSuffix)) {
      // A batch message: every image in it arrived now.
      if (sinks::for_each_batched_image(
              bytes(parts[1]), bytes(parts[2]),
              [&](const sinks::ImageHeader& h, auto payload) { on_image(h, payload, now); }) == 0)
        ++bad;
      else
        ++batches;
      continue;
    }
    const auto header = parts.size() == 3
                            ? sinks::decode_image_message(bytes(parts[1]), bytes(parts[2]))
                            : std::nullopt;
    if (!header) {
      ++bad;
      continue;
    }
    on_image(*header, bytes(parts[2]), now);
  }
  const bool interrupted = stop.count() > 0;
  const auto l = latency.snapshot().summary();
  const auto t = counts.totals();
  const double span = static_cast<double>(last_ns - first_ns) / 1e9;
  std::string more;
  if (batches) more += fmt::format(", batch messages {}", batches);
  if (t.series_with_sent)
    more += fmt::format(", sent not received {} ({} series-end{} with frames_sent)",
                        t.sent_not_received, t.series_with_sent, t.series_with_sent > 1 ? "s" : "");
  if (saver) {
    more += fmt::format(", saved {}", saver->saved());
    if (saver->refused() || saver->failed())
      more += fmt::format(", not saved {} (file existed), {} (write failed)", saver->refused(),
                          saver->failed());
  }
  if (ended) more += ", series ended";
  fmt::print(
      "images {}, missing by seq {}, reported dropped {}, out of order {}, malformed {}, "
      "duplicates {}, series {}, series messages {}{}\n",
      images, t.missing, t.reported_dropped, t.out_of_order, bad, t.duplicates, t.series, series,
      more);
  if (images)
    fmt::print(
        "rate {:.1f} images/s; end-to-end latency (acquired → received) p50 {:.1f} µs, "
        "p90 {:.1f} µs, p99 {:.1f} µs, p99.9 {:.1f} µs, max {:.1f} µs\n",
        span > 0 ? static_cast<double>(images - 1) / span : 0.0, l.p50_ns / 1e3, l.p90_ns / 1e3,
        l.p99_ns / 1e3, l.p999_ns / 1e3, l.max_ns / 1e3);
  std::fflush(stdout);
  if (shm_feed && !shm_feed->attached())
    throw CommandError(fmt::format("no publisher was found: {}", shm_feed->problem()));
  // Why nothing (more) came, where the link knows: the publisher refused this key, nothing
  // listens there…
  const std::string link_problem =
      link && link->state() != sinks::LinkState::kConnected && !link->error().empty()
          ? fmt::format(" ({})", link->error())
          : "";
  if (o.count > 0 && images < o.count)
    throw CommandError(
        fmt::format("{} of the {} images of --count received before {}{}", images, o.count,
                    interrupted ? "the interruption"
                    : ended     ? "the series ended"
                                : "the timeout",
                    link_problem),
        kExitCountNotReached);
  if (saver && (saver->refused() || saver->failed()))
    throw CommandError(
        fmt::format("{} images not saved in '{}' ({} files existed, {} writes failed)",
                    saver->refused() + saver->failed(), o.save_dir, saver->refused(),
                    saver->failed()),
        kExitNotSaved);
}

const RegisterCommand kListen{
    40, [](CLI::App& app) {
      auto o = std::make_shared<ListenOptions>();
      auto* cmd = app.add_subcommand("listen", "Subscribe to published images and report on them");
      cmd->add_option("endpoint", o->endpoint,
                      "e.g. tcp://127.0.0.1:5555, or nats://HOST:4222?site=S&bed=B[&since=new|all|"
                      "EPOCH_SECONDS] (one bed's images from JetStream; since= replays history), or "
                      "shm://NAME (a shared-memory ring of `run --publish shm://NAME`, same host)")
          ->required();
      cmd->add_flag("--pull", o->pull, "PULL (from a --push publisher) instead of SUB");
      cmd->add_flag("--summary", o->summary, "Only the final summary, no line per image");
      cmd->add_option("--count", o->count, "Stop after N images");
      cmd->add_option("--save", o->save_dir,
                      "Save every image into this folder as img_<series_id>_<seq>.npy (or .f32); "
                      "an existing file is never overwritten (counted as not saved)");
      cmd->add_option("--format", o->format, "npy | raw (float32)")->capture_default_str();
      cmd->add_option("--topic", o->topic, "Subscription prefix")->capture_default_str();
      cmd->add_flag("--exit-on-end", o->exit_on_end, "Stop at the series-end message");
      cmd->add_option("--timeout", o->timeout_s, "Stop after N seconds (0: no limit)")
          ->check(non_negative());
      cmd->add_option("--max-message-bytes", o->max_message_bytes,
                      "Largest message accepted (ZMQ_MAXMSGSIZE; default 4 MiB, an image of "
                      "1024×1024 floats); a peer sending more is disconnected")
          ->check(within(0, 2147483647, false, false));
      add_curve_client_options(*cmd, o->curve);
      cmd->footer(
          "Counts are per series (the header's series_id): missing by seq = seq numbers between "
          "the first and newest image received of a series that never came; reported dropped = "
          "those of them the publisher's images say its pipeline dropped; duplicates = a series "
          "and seq received again; sent not received = a series-end's frames_sent minus the "
          "images received of that series (docs/protocol.md).\n"
          "Exit status: 0 success; 1 a wrong set-up (an option value, an endpoint that cannot be "
          "connected, a shm:// ring that never had a live publisher); 2 a command line that does "
          "not parse; 3 --count was given and fewer images came before the timeout, the end of "
          "the series (--exit-on-end) or an interruption; 4 images not saved (--save: a file "
          "existed, or a write failed). When several apply, the lowest." +
          std::string(kExitBySignalBeforeSetUp));
      cmd->callback([o] { listen(*o); });
    }};

}  // namespace
}  // namespace eit::cli
