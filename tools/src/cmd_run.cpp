// `eitstream run`: source → pipeline → ZeroMQ, with a live status line and a final summary.
// With no arguments: the synthetic 16-electrode phantom at 50 frames/s through the built-in model,
// published (PUB) on tcp://127.0.0.1:5555, until Ctrl-C. A first Ctrl-C stops the source and
// flushes every frame already received; a second one abandons frames still waiting on a consumer.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "backend_factory.hpp"
#include "command_registry.hpp"
#include "default_setup.hpp"
#include "eit/acquisition/live_source.hpp"
#include "eit/acquisition/replay_source.hpp"
#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/recon/default_model.hpp"
#include "eit/recon/model_file.hpp"
#include "eit/sinks/hdf5_frame_recorder.hpp"
#include "eit/sinks/hdf5_image_recorder.hpp"
#include "eit/sinks/zmq_publisher.hpp"
#include "phantom_source.hpp"
#include "recording_option_table.hpp"
#include "reference_choice.hpp"
#include "run_config.hpp"
#include "run_indices.hpp"
#include "run_nats.hpp"
#include "run_report.hpp"
#include "run_security.hpp"
#include "run_sources.hpp"
#include "source_fingerprint.hpp"
#include "network_exposure.hpp"
#include "source_watchdog.hpp"
#include "run_view.hpp"

namespace eit::cli {
namespace {

std::atomic<int> g_interrupts{0};
extern "C" void on_interrupt(int) { g_interrupts.fetch_add(1); }


// --latency-mode, --stages and --cpus onto the pipeline's options.
void apply_latency_options(const RunConfig& c, pipeline::PipelineOptions& o) {
  if (c.latency_mode == "spin")
    o.latency_mode = pipeline::LatencyMode::kSpin;
  else if (c.latency_mode == "balanced")
    o.latency_mode = pipeline::LatencyMode::kBalanced;
  else if (c.latency_mode == "idle")
    o.latency_mode = pipeline::LatencyMode::kIdle;
  else
    throw CommandError(
        fmt::format("--latency-mode '{}': expected spin, balanced or idle", c.latency_mode));
  if (c.stages == "auto")
    o.stages = pipeline::StageLayout::kAuto;
  else if (c.stages == "pipelined")
    o.stages = pipeline::StageLayout::kPipelined;
  else if (c.stages == "run-to-completion")
    o.stages = pipeline::StageLayout::kRunToCompletion;
  else
    throw CommandError(
        fmt::format("--stages '{}': expected auto, pipelined or run-to-completion", c.stages));
  const long n_cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t pos = 0;
  while (pos < c.cpus.size()) {
    const size_t comma = std::min(c.cpus.find(',', pos), c.cpus.size());
    const std::string item = c.cpus.substr(pos, comma - pos);
    int cpu = -1;
    try {
      size_t used = 0;
      cpu = std::stoi(item, &used);
      if (used != item.size()) cpu = -1;
    } catch (const std::exception&) {
    }
    if (cpu < 0 || cpu >= n_cpus)
      throw CommandError(fmt::format("--cpus '{}': '{}' is not a CPU number in 0..{}", c.cpus,
                                     item, n_cpus - 1));
    o.cpus.push_back(cpu);
    pos = comma + 1;
  }
}

// The frame source: the synthetic phantom, a recording (a path) or a live device (a URI).
std::unique_ptr<pipeline::Source> open_source(const RunConfig& c, const recon::Model& model,
                                              const recon::Mesh* builtin_mesh) {
  if (c.source == "synthetic") {
    acquisition::PhantomOptions po;
    po.rate_hz = c.fps < 0 ? 50.0 : c.fps;
    po.snr_db = c.snr_db;
    const recon::Mesh mesh = builtin_mesh ? *builtin_mesh : phantom_mesh_for(model);
    return std::make_unique<acquisition::SyntheticPhantomSource>(mesh, model.protocol, po);
  }
  if (const auto breathing = parse_breathing_source(c.source))
    return open_breathing_phantom(*breathing, c.fps < 0 ? 50.0 : c.fps, c.snr_db, model.protocol,
                                  builtin_mesh ? *builtin_mesh : phantom_mesh_for(model));
  if (c.source.find("://") != std::string::npos) return open_live(c.source, c.fps, model.protocol);
  acquisition::ReplayOptions o;
  o.recording = to_recording_options(c.recording);
  if (c.fps > 0) o.fps = c.fps;
  o.unpaced = c.fps == 0;
  o.loop = c.loop;
  o.speed = c.recording.speed;
  return open_replay_file(c.source, o, model.protocol);
}

bool is_recording(const RunConfig& c) {
  return c.source != "synthetic" && !c.source.starts_with("phantom:") &&
         c.source.find("://") == std::string::npos;
}

// The optional HDF5 recorders of --record and --record-raw.
struct Recorders {
  std::unique_ptr<sinks::Hdf5ImageRecorder> images;
  std::unique_ptr<sinks::Hdf5FrameRecorder> frames;
};

Recorders open_recorders(const RunConfig& c, const recon::Model& model,
                         const pipeline::Source& source, const ReferenceChoice& ref,
                         std::unique_ptr<sinks::RecordingAnnex> annex = nullptr) {
  Recorders r;
  if (c.record.empty() && c.record_raw.empty()) return r;
  sinks::Hdf5RecorderOptions o;
  o.stream = c.stream;
  o.frame_rate_hz = source.nominal_rate_hz();
  o.reference = ref.description;
  o.source = is_recording(c) ? source_fingerprint(c.source) : c.source;
  o.chunk_frames = c.record_chunk;
  o.drop_when_behind = c.policy == "live";  // a slow disk never stalls the live path
  if (c.record_compress > 9)
    throw CommandError(fmt::format("--record-compress {}: expected 0 to 9", c.record_compress));
  if (!c.record.empty()) {
    o.deflate = static_cast<int>(c.record_compress);
    r.images = std::make_unique<sinks::Hdf5ImageRecorder>(c.record, model, o, std::move(annex));
  }
  if (!c.record_raw.empty()) {
    o.deflate = 0;
    if (ref.options.mode == pipeline::ReferenceMode::kGiven)
      o.reference_values = ref.options.values;
    if (ref.options.mode == pipeline::ReferenceMode::kModel)
      o.reference_values.assign(model.v_ref.data(), model.v_ref.data() + model.v_ref.size());
    r.frames = std::make_unique<sinks::Hdf5FrameRecorder>(c.record_raw, model, o);
  }
  return r;
}

// A recorder's summary: its own counts, plus the frames its queue dropped because the disk was
// slower than the live stream (live policy only).
std::string sink_line(const char* what, const std::string& path, const pipeline::SinkStats& s,
                      const pipeline::SinkQueueStats& q) {
  const uint64_t behind = q.queue.dropped;
  return fmt::format(
      "{} {}: {} frames written, {} lost, {} write errors{}{}\n", what, path, s.sent,
      s.dropped + behind, s.errors,
      behind ? fmt::format(" ({} dropped: the disk was slower than the live stream)", behind)
             : std::string(),
      s.errors || behind ? " — THE RECORDING IS INCOMPLETE" : "");
}

int run(const RunConfig& c, const RunIndices& indices, const RunSecurity& security) {
  if (c.policy != "live" && c.policy != "lossless")
    throw CommandError(fmt::format("--policy '{}': expected live or lossless", c.policy));

  // Model: a file, or the built-in one on the default mesh.
  recon::Model model;
  std::unique_ptr<recon::Mesh> builtin_mesh;
  if (!c.model.empty()) {
    model = recon::load_model(c.model);
  } else {
    model = recon::default_model();
    builtin_mesh = std::make_unique<recon::Mesh>(default_mesh(model.protocol.n_electrodes));
  }
  const bool interleaved =
      is_recording(c) &&
      to_recording_options(c.recording).complex_part == acquisition::ComplexPart::kInterleaved;
  check_complex_frames(model, interleaved);
  auto source = open_source(c, model, builtin_mesh.get());
  const auto* phantom = dynamic_cast<const acquisition::SyntheticPhantomSource*>(source.get());
  std::vector<std::string> warnings;
  if (const auto* replay = dynamic_cast<const acquisition::ReplaySource*>(source.get()))
    warnings = replay->warnings();
  for (const auto& w : warnings) fmt::print(stderr, "eitstream: warning: {}\n", w);
  ReferenceContext rc;
  std::vector<double> homogeneous;
  if (phantom) {
    const auto& h = phantom->table().homogeneous;
    homogeneous.assign(h.data(), h.data() + h.size());
    rc.phantom = &homogeneous;
  }
  if (is_recording(c)) {
    rc.recording = c.source;
    rc.recording_options = to_recording_options(c.recording);
  }
  const ReferenceChoice ref = choose_reference(c.reference, model, rc);

  pipeline::PipelineOptions o;
  o.policy = c.policy == "live" ? pipeline::Policy::kLive : pipeline::Policy::kLossless;
  o.queue_capacity = c.queue;
  o.max_batch = c.max_batch;
  o.max_frames = c.frames;
  o.warm_interval_us = static_cast<int64_t>(c.warm_us);
  o.reference = ref.options;
  if (c.normalize) o.normalize = 1;
  apply_latency_options(c, o);
  Backend backend = make_backend(c.backend, model, c.max_batch, 1, interleaved);
  if (!backend.why_not_cuda.empty())
    fmt::print(stderr, "eitstream: --backend {} chose cpu: {}\n", c.backend,
               backend.why_not_cuda);

  // Loud warnings for anything reachable from other machines (network_exposure.hpp).
  warn_if_beyond_loopback("the image publisher (--endpoint)", c.endpoint);
  if (!c.monitor.empty()) warn_if_beyond_loopback("the monitor publisher (--monitor)", c.monitor);
  if (!c.http.empty()) warn_if_beyond_loopback("the live view (--http)", c.http);
  if (!indices.endpoint.empty())
    warn_if_beyond_loopback("the indices publisher (--indices)", indices.endpoint);
  if (c.source.starts_with("tcp-listen://") || c.source.starts_with("udp://"))
    warn_if_beyond_loopback("the device source (--source)", c.source);

  sinks::ZmqPublisherOptions zo;
  zo.endpoint = c.endpoint;
  zo.pattern = c.push ? sinks::ZmqPattern::kPush : sinks::ZmqPattern::kPub;
  zo.lossless = o.policy == pipeline::Policy::kLossless;
  zo.series.stream = c.stream;
  zo.series.source = source->describe();
  zo.series.rate_hz = source->nominal_rate_hz();
  zo.series.normalized = o.normalize < 0 ? model.normalize : o.normalize > 0;
  apply_run_security(security, c, indices.endpoint, zo);
  sinks::ZmqPublisher publisher(model, zo);
  check_publisher_exposure(security, zo, publisher.endpoint());
  sinks::SeriesInfo view_series = zo.series;
  view_series.series_id = publisher.series_id();
  view_series.policy = c.policy;
  RunView live_view = open_run_view(c.http, model, view_series);
  std::vector<pipeline::ImageSink*> sinks{&publisher};
  std::unique_ptr<sinks::ZmqPublisher> monitor;
  if (!c.monitor.empty()) {
    sinks::ZmqPublisherOptions mo = zo;
    mo.endpoint = c.monitor;
    mo.pattern = sinks::ZmqPattern::kPub;
    mo.lossless = false;
    monitor = std::make_unique<sinks::ZmqPublisher>(model, mo);
    check_publisher_exposure(security, mo, monitor->endpoint(), "--monitor");
    sinks.push_back(monitor.get());
    fmt::print(stderr, "eitstream: also publishing PUB (live) on {}\n", monitor->endpoint());
  }
  std::unique_ptr<pipeline::ImageSink> nats_sink;
  if (!c.publish.empty()) {
    auto series = zo.series;
    series.series_id = publisher.series_id();
    nats_sink = make_nats_sink(c.publish, model, series);
    sinks.push_back(nats_sink.get());
    fmt::print(stderr, "eitstream: also publishing to NATS {}\n", c.publish);
  }

  const double indices_rate = c.fps > 0 ? c.fps : source->nominal_rate_hz();
  const auto indices_sink = make_indices_sink(indices, model, c.stream, indices_rate);
  Recorders recorders = open_recorders(
      c, model, *source, ref,
      c.record.empty() ? nullptr : make_indices_annex(indices, model, indices_rate));
  if (indices_sink) sinks.push_back(indices_sink.get());
  attach_indices_to_view(live_view, indices_sink.get());
  if (live_view.sink) sinks.push_back(live_view.sink.get());
  // Where the recorders' counters will be in PipelineStats::sinks (same order as `sinks`).
  const size_t images_at = sinks.size(), frames_at = sinks.size() + (recorders.images ? 1 : 0);
  if (recorders.images) sinks.push_back(recorders.images.get());
  if (recorders.frames) sinks.push_back(recorders.frames.get());

  pipeline::Pipeline pipe(model, *source, std::move(backend.reconstructor), sinks, o);
  fmt::print(stderr,
             "eitstream: {} → model {} ({}, {}×{}) → {} → {} {} on {} (stream '{}', policy {}; "
             "stages {}, latency mode {})\n",
             source->describe(), model.id, model.algorithm, model.n_out(), model.n_meas(),
             backend.description, c.push ? "PUSH" : "PUB", zo.lossless ? "lossless" : "live",
             publisher.endpoint(), c.stream, c.policy, pipeline::layout_name(pipe.layout()),
             c.latency_mode);
  fmt::print(stderr, "eitstream: reference {}\n", ref.description);
  if (!zo.curve_server.secret_z85.empty())
    fmt::print(stderr, "eitstream: CURVE on: server key {}, {} client keys admitted\n",
               zo.curve_server.public_z85, zo.curve_allowed.size());
  if (recorders.images) fmt::print(stderr, "eitstream: recording images to {}\n", c.record);
  if (recorders.frames) fmt::print(stderr, "eitstream: recording raw frames to {}\n", c.record_raw);

  g_interrupts = 0;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const bool tty = isatty(fileno(stderr));
  const RunViewStopper view_stopper = start_run_view(live_view, pipe);
  pipe.start();
  StatusLine status(pipe);
  const int64_t t0 = pipeline::now_ns();
  int64_t next_status = t0 + 500'000'000;
  const bool device_source = dynamic_cast<const acquisition::StreamSource*>(source.get());
  SourceWatchdog watchdog(c.source, device_source ? c.source_timeout : 0, t0);
  std::string source_failure;
  int64_t next_watch = t0;
  bool stopping = false, aborted = false;
  while (!pipe.finished()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int64_t now = pipeline::now_ns();
    const bool timed_out = c.duration > 0 && now - t0 >= static_cast<int64_t>(c.duration * 1e9);
    if (!stopping && (g_interrupts > 0 || timed_out)) {
      stopping = true;
      pipe.request_stop();
    }
    if (device_source && !stopping && now >= next_watch) {
      const auto st = pipe.stats();
      if (auto why = watchdog.check(st.source, st.frames_in, now)) {
        source_failure = *why;
        stopping = true;
        pipe.request_stop();
      }
      next_watch = now + 100'000'000;
    }
    if (!aborted && g_interrupts > 1) {
      aborted = true;
      pipe.abort();
    }
    if (!c.quiet && now >= next_status) {
      std::string line = fmt::format("{} | {}", status.next(), publisher.health_line());
      if (nats_sink) line += " | " + nats_status(*nats_sink);
      if (monitor) line += " | monitor " + monitor->health_line();
      if (tty)
        fmt::print(stderr, "\r{}\x1b[K", line);
      else
        fmt::print(stderr, "{}\n", line);
      std::fflush(stderr);
      next_status = now + 500'000'000;
    }
  }
  pipe.wait();
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  if (!c.quiet && tty) fmt::print(stderr, "\n");
  const auto stats = pipe.stats();
  fmt::print("{}", final_summary(stats));
  fmt::print("publisher: {}\n", publisher.health_line());
  if (monitor) fmt::print("monitor publisher: {}\n", monitor->health_line());
  if (recorders.images)
    fmt::print("{}", sink_line("images", c.record, stats.sinks.at(images_at),
                               stats.sink_queues.at(images_at)));
  if (recorders.frames)
    fmt::print("{}", sink_line("raw frames", c.record_raw, stats.sinks.at(frames_at),
                               stats.sink_queues.at(frames_at)));
  for (const auto& w : warnings) fmt::print("warning: {}\n", w);
  if (nats_sink) fmt::print("{}\n", nats_status(*nats_sink));
  std::fflush(stdout);
  if (stats.backend_faults > 0 && stats.lost_on_fault > 0) return 3;
  if (device_source && source_failure.empty())
    source_failure = watchdog.at_end(stats.source, stats.frames_in).value_or("");
  if (!source_failure.empty()) throw CommandError("source failed: " + source_failure, 5);
  // Lossless: every frame reaches the consumer, or the run says how many did not and fails.
  const auto health = publisher.health();
  if (zo.lossless && (health.undelivered > 0 || !health.series_end_delivered)) {
    fmt::print(stderr,
               "eitstream: lossless {}: {} frames{} did not reach the consumer (still queued when "
               "the run ended)\n",
               c.push ? "PUSH" : "PUB", health.undelivered,
               health.series_end_delivered ? "" : " and the series-end");
    return 4;
  }
  return 0;
}

// Option name → config key; options given on the command line override the config file.
constexpr std::pair<const char*, const char*> kOptionKeys[] = {
    {"--model", "model"},
    {"--source", "source"},
    {"--backend", "backend"},
    {"--endpoint", "endpoint"},
    {"--push", "push"},
    {"--policy", "policy"},
    {"--fps", "fps"},
    {"--loop", "loop"},
    {"--frames", "frames"},
    {"--duration", "duration"},
    {"--reference", "reference"},
    {"--normalize", "normalize"},
    {"--stream", "stream"},
    {"--snr", "snr_db"},
    {"--max-batch", "max_batch"},
    {"--queue", "queue"},
    {"--warm-us", "warm_us"},
    {"--quiet", "quiet"},
    {"--record", "record"},
    {"--record-raw", "record_raw"},
    {"--record-compress", "record_compress"},
    {"--record-chunk", "record_chunk"},
    {"--publish", "publish"},
    {"--http", "http"},
    {"--monitor", "monitor"},
    {"--source-timeout", "source_timeout"},
    {"--latency-mode", "latency_mode"},
    {"--stages", "stages"},
    {"--cpus", "cpus"}};

void attach_run(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("run",
                         "Stream frames through the reconstructor and publish images over ZeroMQ "
                         "(no arguments: synthetic phantom, built-in model, tcp://127.0.0.1:5555)");
  auto cli = std::make_shared<RunConfig>();
  auto config_file = std::make_shared<std::string>();
  cmd->add_option("--model", cli->model, "Model file (HDF5); default: the built-in model");
  cmd->add_option("--source", cli->source,
                  std::string("synthetic (an anomaly orbiting in the body) | ") +
                      kBreathingSourceHelp +
                      " | recording file (any format of docs/formats.md, incl. eitstream raw "
                      ".h5) | device URI (tcp://, tcp-listen://, udp://, serial://, file://, "
                      "nats://HOST:PORT?site=S&bed=B)")
      ->capture_default_str();
  cmd->add_option("--backend", cli->backend, "auto | cpu | cuda")->capture_default_str();
  cmd->add_option("--endpoint", cli->endpoint, "ZeroMQ endpoint to bind")->capture_default_str();
  cmd->add_flag("--push", cli->push, "PUSH for lossless consumers instead of PUB");
  cmd->add_option("--policy", cli->policy, "live (drop newest) | lossless (wait)")
      ->capture_default_str();
  cmd->add_option("--fps", cli->fps,
                  "Frame rate: synthetic default 50, replay default the file's; 0 = as fast as "
                  "possible");
  cmd->add_flag("--loop", cli->loop, "Replay: start over at the end of the recording");
  cmd->add_option("--frames", cli->frames, "Stop after N frames (0 = no limit)");
  cmd->add_option("--duration", cli->duration, "Stop after N seconds (0 = until Ctrl-C)");
  cmd->add_option("--reference", cli->reference,
                  "model | phantom | first:N | mean:A-B | frame:K | variable:NAME | file:PATH "
                  "(default: phantom for the synthetic source, the file's stored reference for "
                  "eitstream raw files, else first:10; printed at start)");
  cmd->add_flag("--normalize", cli->normalize, "Images from dv/|v_ref|");
  cmd->add_option("--stream", cli->stream, "Stream name in topics eit/<stream>/…")
      ->capture_default_str();
  cmd->add_option("--snr", cli->snr_db, "Synthetic noise, SNR in dB")->capture_default_str();
  cmd->add_option("--max-batch", cli->max_batch, "Most frames per backend call")
      ->capture_default_str();
  cmd->add_option("--queue", cli->queue, "Capacity of each queue")->capture_default_str();
  cmd->add_option("--warm-us", cli->warm_us,
                  "Idle reconstructor re-reads H this often (µs) to keep it cached; 0 = never")
      ->capture_default_str();
  cmd->add_flag("--quiet", cli->quiet, "No status line");
  cmd->add_option("--record", cli->record,
                  "Keep every image in this HDF5 file (SWMR; layout in docs/formats.md). "
                  "--policy lossless waits for the disk; live drops for the file alone when the "
                  "disk falls behind (counted, in the summary)");
  cmd->add_option("--record-raw", cli->record_raw,
                  "Keep every frame's measurements in this HDF5 file (replay or reconstruct it "
                  "later)");
  cmd->add_option("--record-compress", cli->record_compress,
                  "Deflate level 1-9 for the image file (0 = none)")
      ->capture_default_str();
  cmd->add_option("--record-chunk", cli->record_chunk, "Frames per HDF5 chunk")
      ->capture_default_str();
  add_recording_options(cmd, cli->recording, true);
  cmd->add_option("--publish", cli->publish,
                  "Also publish images to NATS JetStream: nats://HOST:4222?site=S&bed=B "
                  "(subjects eit.S.B.img|series; see docs/scale-out.md)");
  cmd->add_option("--http", cli->http,
                  "Also serve the live view (web page) on HOST:PORT, e.g. 127.0.0.1:8080 (port 0: "
                  "any free port, printed); its recapture button recaptures the reference");
  cmd->add_option("--source-timeout", cli->source_timeout,
                  "Live device source (tcp, tcp-listen, udp, serial, file URI): end with exit "
                  "status 5 and the reason when no valid frame arrived in N s from the start, or "
                  "only rejected frames for N s (0: never; a run that ends without one valid "
                  "frame fails either way)")
      ->capture_default_str();
  cmd->add_option("--monitor", cli->monitor,
                  "Also publish the images PUB (live: never waits, drops per slow subscriber) on "
                  "this endpoint, e.g. for viewers beside a lossless --push consumer");
  cmd->add_option("--latency-mode", cli->latency_mode,
                  "How stages wait for work: spin (busy-poll, a core per stage), balanced (poll "
                  "30 µs, then sleep on a futex; ~0 CPU idle), idle (sleep at once)")
      ->capture_default_str();
  cmd->add_option("--stages", cli->stages,
                  "auto | pipelined | run-to-completion (read, reconstruct and hand to the sinks "
                  "on one thread; auto picks it for the CPU backend with a source paced at ≥ 500 frames/s)")
      ->capture_default_str();
  cmd->add_option("--cpus", cli->cpus,
                  "Pin the stage threads (source, reconstructor, each sink) to these CPUs, "
                  "round robin, e.g. 2,3 (with --latency-mode spin on a dedicated host)");
  cmd->add_option("--config", *config_file, "JSON file with the same keys as the options");
  auto indices = std::make_shared<RunIndices>();
  cmd->add_option("--indices", indices->endpoint,
                  "Also compute clinical indices and publish them (PUB) on this endpoint: "
                  "eit/<stream>/global per frame, eit/<stream>/breath per breath (docs/indices.md)");
  add_indices_options(*cmd, indices->options, "indices-");
  auto security = std::make_shared<RunSecurity>();
  add_security_options(*cmd, *security);
  cmd->callback([cmd, cli, config_file, indices, security] {
    RunConfig c;
    if (!config_file->empty()) apply_config_file(*config_file, c);
    for (const auto& [option, key] : kOptionKeys)
      if (cmd->get_option(option)->count() > 0) copy_key(key, *cli, c);
    for (const auto& [option, key] : recording_option_keys())
      if (cmd->get_option(option)->count() > 0) copy_key(key, *cli, c);
    const int rc = run(c, *indices, *security);
    if (rc == 4) throw CommandError("lossless delivery incomplete", rc);
    if (rc != 0) throw CommandError("the backend failed and frames were lost", rc);
  });
}

const RegisterCommand kRun{10, attach_run};

}  // namespace
}  // namespace eit::cli
