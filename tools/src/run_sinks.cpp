// The sinks of `eitstream run` (run_sinks.hpp).
#include "run_sinks.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "command_registry.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/sinks/curve_keys.hpp"
#include "eit/sinks/shm_layout.hpp"
#include "eit/sinks/shm_publisher.hpp"
#include "run_nats.hpp"

namespace eit::cli {

RunSinks open_run_sinks(const RunConfig& c, const RunIndices& indices, const RunSecurity& security,
                        const recon::Model& model, const pipeline::Source& source,
                        const ReferenceChoice& ref, const pipeline::PipelineOptions& o,
                        pipeline::StageLayout layout) {
  RunSinks s;
  sinks::ZmqPublisherOptions& zo = s.publisher_options;
  zo.endpoint = c.endpoint;
  zo.pattern = c.push ? sinks::ZmqPattern::kPush : sinks::ZmqPattern::kPub;
  zo.lossless = o.policy == pipeline::Policy::kLossless;
  zo.publish_batch = c.publish_batch;
  zo.series.stream = c.stream;
  zo.series.source = source.describe();
  zo.series.rate_hz = source.nominal_rate_hz();
  zo.series.normalized = o.normalize < 0 ? model.normalize : o.normalize > 0;
  apply_run_security(security, c, indices.endpoint, zo);
  if (c.zmq_send != "lane" && c.zmq_send != "inline")
    throw CommandError(fmt::format("--zmq-send '{}': expected lane or inline", c.zmq_send));
  zo.send_inline = c.zmq_send == "inline";
  if (zo.send_inline)
    if (std::string why = zmq_send_inline_refusal(zo.lossless, c.publish_batch); !why.empty())
      throw CommandError(std::move(why));
  const std::optional<int> io_choice = parse_zmq_io_cpu(c.zmq_io_cpu);
  if (!io_choice)
    throw CommandError(
        fmt::format("--zmq-io-cpu '{}': expected {}", c.zmq_io_cpu, kZmqIoCpuChoices));
  const int own_io_cpu = *io_choice;
  const bool spin = o.latency_mode == pipeline::LatencyMode::kSpin;
  if (own_io_cpu >= 0 && !spin)
    throw CommandError(fmt::format(
        "--zmq-io-cpu {}: a CPU of their own for the I/O threads needs --latency-mode spin (it "
        "keeps that CPU busy); in {} mode use sink or any",
        own_io_cpu, pipeline::latency_mode_name(o.latency_mode)));
  // --cpus (and --zmq-io-cpu sink), any latency mode: ZeroMQ's I/O thread joins the publisher's
  // sink thread on its CPU, whose polls yield to it: no cross-CPU wake-up per image
  // (zmq_io_placement.hpp; on a small VM, --cpus with one CPU keeps the whole chain on it).
  // --zmq-io-cpu N: every publisher's I/O thread on CPU N, kept out of idle (cpu_keeper.hpp),
  // so the send call only hands the image over.
  const std::vector<int> cpus = c.zmq_io_cpu == "sink" ? o.cpus : std::vector<int>{};
  if (own_io_cpu >= 0 && std::ranges::find(o.cpus, own_io_cpu) != o.cpus.end())
    throw CommandError(fmt::format(
        "--zmq-io-cpu {}: CPU {} is also in --cpus; the I/O threads need a CPU where no stage "
        "spins",
        own_io_cpu, own_io_cpu));
  if (own_io_cpu >= 0) {
    s.io_keeper = std::make_unique<pipeline::CpuKeeper>(own_io_cpu);
    if (!s.io_keeper->keeping())
      throw CommandError(fmt::format("--zmq-io-cpu {}: {}", own_io_cpu, s.io_keeper->describe()));
  }
  const auto io_cpu_of_sink = [&](size_t sink) {
    return own_io_cpu >= 0 ? own_io_cpu : pipeline::stage_cpu(cpus, pipeline::sink_thread(sink));
  };
  // Inline, the publisher sends from the thread that finishes each frame: its I/O threads there.
  const size_t producer = layout == pipeline::StageLayout::kRunToCompletion ? 0 : 1;
  zo.io_cpu =
      !zo.send_inline || own_io_cpu >= 0 ? io_cpu_of_sink(0) : pipeline::stage_cpu(cpus, producer);
  const std::optional<bool> defer = parse_zmq_io_defer(c.zmq_io_wake);
  if (!defer)
    throw CommandError(fmt::format("--zmq-io-wake '{}': expected preempt or defer", c.zmq_io_wake));
  if (*defer && zo.io_cpu < 0)
    throw CommandError(
        "--zmq-io-wake defer: acts on placed I/O threads only; give --cpus (with --zmq-io-cpu "
        "sink) or --zmq-io-cpu N");
  zo.io_wake = *defer ? sinks::IoWake::kDefer : sinks::IoWake::kPreempt;
  s.publisher = std::make_unique<sinks::ZmqPublisher>(model, zo);
  check_publisher_exposure(security, zo, s.publisher->endpoint());
  sinks::SeriesInfo view_series = zo.series;
  view_series.series_id = s.publisher->series_id();
  view_series.policy = c.policy;
  s.view = open_run_view(c.http, model, view_series);
  s.all.push_back(s.publisher.get());
  if (!c.monitor.empty()) {
    sinks::ZmqPublisherOptions mo = zo;
    mo.endpoint = c.monitor;
    mo.pattern = sinks::ZmqPattern::kPub;
    mo.lossless = false;
    mo.publish_batch = 1;  // viewers: one image per message, whatever the main socket batches
    mo.send_inline = false;  // its own lane: --zmq-send is the main publisher's
    mo.io_cpu = io_cpu_of_sink(1);
    s.monitor = std::make_unique<sinks::ZmqPublisher>(model, mo);
    check_publisher_exposure(security, mo, s.monitor->endpoint(), "--monitor");
    s.all.push_back(s.monitor.get());
    fmt::print(stderr, "eitstream: also publishing PUB (live) on {}\n", s.monitor->endpoint());
  }
  if (sinks::is_shm_uri(c.publish)) {
    sinks::ShmPublisherOptions so;
    so.uri = c.publish;
    so.series = zo.series;
    so.series.series_id = s.publisher->series_id();
    auto shm = std::make_unique<sinks::ShmPublisher>(model, so);
    if (!shm->replaced_stale().empty())
      fmt::print(stderr, "eitstream: {}: {}\n", shm->uri(), shm->replaced_stale());
    fmt::print(stderr, "eitstream: also publishing to shared memory {} (live, {} slots)\n",
               shm->uri(), so.slots);
    s.shm = std::move(shm);
    s.all.push_back(s.shm.get());
  } else if (!c.publish.empty()) {
    auto series = zo.series;
    series.series_id = s.publisher->series_id();
    s.nats = make_nats_sink(c.publish, model, series);
    s.all.push_back(s.nats.get());
    fmt::print(stderr, "eitstream: also publishing to NATS {}\n", c.publish);
  }

  // Breath timing runs on the frames' own time base, whatever the replay speed (--fps sets it
  // for a replay, and is the nominal rate of a live source).
  const double indices_rate = source.recorded_rate_hz();
  // CURVE on the indices too, with the publisher's keys; the live view inside this process reads
  // them with a key pair of its own, admitted for this run only.
  view::ZmqViewCurve view_curve;
  std::vector<std::string> indices_allowed = zo.curve_allowed;
  if (!zo.curve_server.secret_z85.empty() && !indices.endpoint.empty() && s.view.server) {
    view_curve.server_public_z85 = zo.curve_server.public_z85;
    view_curve.client = sinks::generate_curve_keypair();
    indices_allowed.push_back(view_curve.client.public_z85);
  }
  s.indices = make_indices_sink(indices, model, c.stream, indices_rate, zo.curve_server,
                                indices_allowed);
  s.recorders = open_recorders(
      c, model, source, ref,
      c.record.empty() ? nullptr : make_indices_annex(indices, model, indices_rate));
  if (s.indices) s.all.push_back(s.indices.get());
  attach_indices_to_view(s.view, s.indices.get(), view_curve);
  if (s.view.sink) s.all.push_back(s.view.sink.get());
  s.images_at = s.all.size();
  s.frames_at = s.all.size() + (s.recorders.images ? 1 : 0);
  if (s.recorders.images) s.all.push_back(s.recorders.images.get());
  if (s.recorders.frames) s.all.push_back(s.recorders.frames.get());
  return s;
}

}  // namespace eit::cli
