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

#include "command_registry.hpp"
#include "default_setup.hpp"
#include "eit/acquisition/live_source.hpp"
#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/recon/default_model.hpp"
#include "eit/recon/model_file.hpp"
#include "eit/sinks/zmq_publisher.hpp"
#include "run_config.hpp"
#include "run_report.hpp"
#include "run_sources.hpp"
#if defined(EIT_HAVE_CUDA) && __has_include("eit/gpu/cuda_backend.hpp")
#include "eit/gpu/cuda_backend.hpp"
#define EIT_RUN_WITH_CUDA 1
#endif

namespace eit::cli {
namespace {

std::atomic<int> g_interrupts{0};
extern "C" void on_interrupt(int) { g_interrupts.fetch_add(1); }

struct Backend {
  std::unique_ptr<pipeline::Reconstructor> reconstructor;
  std::unique_ptr<pipeline::HostAllocator> allocator;  // pinned memory for CUDA; null: host
  std::string description;
};

Backend make_backend(const std::string& which, const recon::Model& model, size_t max_batch) {
  if (which != "auto" && which != "cpu" && which != "cuda")
    throw CommandError(fmt::format("--backend '{}': expected auto, cpu or cuda", which));
#if EIT_RUN_WITH_CUDA
  std::string why;
  if (which != "cpu" && gpu::cuda_available(&why)) {
    Backend b;
    gpu::CudaOptions co;
    co.max_batch = max_batch;
    b.reconstructor = gpu::make_cuda_reconstructor(model, co);
    b.allocator = gpu::make_pinned_allocator();
    b.description = fmt::format("cuda ({})", gpu::cuda_device_description());
    return b;
  }
  if (which == "cuda") throw CommandError(fmt::format("--backend cuda: {}", why));
#else
  if (which == "cuda")
    throw CommandError("--backend cuda: this eitstream was built without the CUDA backend");
#endif
  Backend b;
  b.reconstructor =
      std::make_unique<pipeline::CpuReconstructor>(model, pipeline::CpuOptions{max_batch});
  b.description = "cpu (Eigen, 1 thread)";
  return b;
}

pipeline::ReferenceOptions parse_reference(const std::string& text,
                                           const acquisition::SyntheticPhantomSource* phantom,
                                           const recon::Model& model) {
  pipeline::ReferenceOptions r;
  std::string t = text;
  if (t.empty()) t = phantom ? "phantom" : "model";
  if (t == "model") {
    r.mode = pipeline::ReferenceMode::kModel;
  } else if (t == "phantom") {
    if (!phantom) throw CommandError("--reference phantom: only with --source synthetic");
    r.mode = pipeline::ReferenceMode::kGiven;
    const auto& h = phantom->table().homogeneous;
    r.values.assign(h.data(), h.data() + h.size());
  } else if (t.starts_with("first:")) {
    r.mode = pipeline::ReferenceMode::kCapture;
    try {
      r.capture_frames = std::stoul(t.substr(6));
    } catch (const std::exception&) {
      r.capture_frames = 0;
    }
    if (r.capture_frames == 0)
      throw CommandError(fmt::format("--reference '{}': expected first:N with N ≥ 1", text));
  } else {
    throw CommandError(fmt::format("--reference '{}': expected model, phantom or first:N", text));
  }
  if (r.mode == pipeline::ReferenceMode::kModel && model.v_ref.size() == 0)
    throw CommandError(
        fmt::format("model {} has no v_ref: use --reference first:N (or phantom)", model.id));
  return r;
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
  if (c.source.find("://") != std::string::npos) return open_live(c.source, c.fps, model.protocol);
  return open_replay_file(c.source, c.fps, c.loop, model.protocol);
}

int run(const RunConfig& c) {
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
  auto source = open_source(c, model, builtin_mesh.get());
  const auto* phantom = dynamic_cast<const acquisition::SyntheticPhantomSource*>(source.get());

  pipeline::PipelineOptions o;
  o.policy = c.policy == "live" ? pipeline::Policy::kLive : pipeline::Policy::kLossless;
  o.queue_capacity = c.queue;
  o.max_batch = c.max_batch;
  o.max_frames = c.frames;
  o.warm_interval_us = static_cast<int64_t>(c.warm_us);
  o.reference = parse_reference(c.reference, phantom, model);
  if (c.normalize) o.normalize = 1;
  Backend backend = make_backend(c.backend, model, c.max_batch);
  o.allocator = backend.allocator.get();

  sinks::ZmqPublisherOptions zo;
  zo.endpoint = c.endpoint;
  zo.pattern = c.push ? sinks::ZmqPattern::kPush : sinks::ZmqPattern::kPub;
  zo.lossless = o.policy == pipeline::Policy::kLossless;
  zo.series.stream = c.stream;
  zo.series.source = source->describe();
  zo.series.rate_hz = source->nominal_rate_hz();
  zo.series.normalized = o.normalize < 0 ? model.normalize : o.normalize > 0;
  sinks::ZmqPublisher publisher(model, zo);

  pipeline::Pipeline pipe(model, *source, std::move(backend.reconstructor), {&publisher}, o);
  fmt::print(stderr,
             "eitstream: {} → model {} ({}, {}×{}) → {} → {} {} on {} (stream '{}', policy {})\n",
             source->describe(), model.id, model.algorithm, model.n_out(), model.n_meas(),
             backend.description, c.push ? "PUSH" : "PUB", zo.lossless ? "lossless" : "live",
             publisher.endpoint(), c.stream, c.policy);

  g_interrupts = 0;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const bool tty = isatty(fileno(stderr));
  pipe.start();
  StatusLine status(pipe);
  const int64_t t0 = pipeline::now_ns();
  int64_t next_status = t0 + 500'000'000;
  bool stopping = false, aborted = false;
  while (!pipe.finished()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int64_t now = pipeline::now_ns();
    const bool timed_out = c.duration > 0 && now - t0 >= static_cast<int64_t>(c.duration * 1e9);
    if (!stopping && (g_interrupts > 0 || timed_out)) {
      stopping = true;
      pipe.request_stop();
    }
    if (!aborted && g_interrupts > 1) {
      aborted = true;
      pipe.abort();
    }
    if (!c.quiet && now >= next_status) {
      const std::string line = fmt::format("{} | {}", status.next(), publisher.health_line());
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
  std::fflush(stdout);
  if (stats.backend_faults > 0 && stats.lost_on_fault > 0) return 3;
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
    {"--model", "model"},       {"--source", "source"},       {"--backend", "backend"},
    {"--endpoint", "endpoint"}, {"--push", "push"},           {"--policy", "policy"},
    {"--fps", "fps"},           {"--loop", "loop"},           {"--frames", "frames"},
    {"--duration", "duration"}, {"--reference", "reference"}, {"--normalize", "normalize"},
    {"--stream", "stream"},     {"--snr", "snr_db"},          {"--max-batch", "max_batch"},
    {"--queue", "queue"},       {"--warm-us", "warm_us"},     {"--quiet", "quiet"}};

void attach_run(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("run",
                         "Stream frames through the reconstructor and publish images over ZeroMQ "
                         "(no arguments: synthetic phantom, built-in model, tcp://127.0.0.1:5555)");
  auto cli = std::make_shared<RunConfig>();
  auto config_file = std::make_shared<std::string>();
  cmd->add_option("--model", cli->model, "Model file (HDF5); default: the built-in model");
  cmd->add_option("--source", cli->source, "synthetic | recording file")->capture_default_str();
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
                  "model | first:N | phantom (default: phantom for the synthetic source, else "
                  "model)");
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
  cmd->add_option("--config", *config_file, "JSON file with the same keys as the options");
  cmd->callback([cmd, cli, config_file] {
    RunConfig c;
    if (!config_file->empty()) apply_config_file(*config_file, c);
    for (const auto& [option, key] : kOptionKeys)
      if (cmd->get_option(option)->count() > 0) copy_key(key, *cli, c);
    const int rc = run(c);
    if (rc == 4) throw CommandError("lossless delivery incomplete", rc);
    if (rc != 0) throw CommandError("the backend failed and frames were lost", rc);
  });
}

const RegisterCommand kRun{10, attach_run};

}  // namespace
}  // namespace eit::cli
