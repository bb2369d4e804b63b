// `eitstream run`: source → pipeline → ZeroMQ, with a live status line and a final summary.
// With no arguments: the synthetic 16-electrode phantom at 50 frames/s through the built-in model,
// published (PUB) on tcp://127.0.0.1:5555, until Ctrl-C. A first Ctrl-C stops the source and
// flushes every frame already received; a second one abandons frames still waiting on a consumer.
// The parts, one file each: run_options (options and config keys), run_inputs (model, source,
// reference), run_pipeline_options, run_security (CURVE, the loopback rule), run_sinks
// (publishers, view, indices, recorders), run_loop (signals, status line, watchdog) and
// run_summary (the final summary and exit status).
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "backend_factory.hpp"
#include "command_registry.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/sinks/image_batch.hpp"
#include "gn_summary.hpp"
#include "phantom_source.hpp"
#include "run_checks.hpp"
#include "run_config.hpp"
#include "run_indices.hpp"
#include "run_inputs.hpp"
#include "run_loop.hpp"
#include "run_nats.hpp"
#include "run_options.hpp"
#include "run_pipeline_options.hpp"
#include "run_security.hpp"
#include "run_sinks.hpp"
#include "run_sources.hpp"
#include "run_summary.hpp"
#include "run_view.hpp"
#include "stop_signals.hpp"

namespace eit::cli {
namespace {

int run(const RunConfig& c, const RunIndices& indices, const RunSecurity& security) {
  if (c.policy != "live" && c.policy != "lossless")
    throw CommandError(fmt::format("--policy '{}': expected live or lossless", c.policy));

  check_run_values(c);
  // A device's URI and TLS files, before the model, which may take seconds to load.
  if (!is_phantom_source(c.source) && !is_recording(c)) check_live_uri(c.source);
  for (const std::string& w : ignored_option_warnings(c))
    fmt::print(stderr, "eitstream: warning: {}\n", w);
  // A nats:// source waits for its server saying so, and gives up after --source-timeout.
  report_nats_server_waits(c.source_timeout);
  const RunInputs in(c);
  const recon::Model& model = in.model;
  if (c.cpu_threads == 0) throw CommandError("--cpu-threads 0: expected 1 or more threads");
  Backend backend = make_backend(c.backend, model, c.max_batch, c.cpu_threads, in.interleaved);
  const ReferenceChoice ref = model.gn && c.reference.empty()
                                  ? absolute_imaging_reference(backend.reconstructor->n_meas())
                                  : in.reference;
  // A gn model images each frame alone; a reference given is kept only as a raw recording's v_ref.
  if (model.gn && !c.reference.empty())
    fmt::print(
        stderr, "eitstream: warning: --reference {}: a gn model does not use it for its images{}\n",
        c.reference, c.record_raw.empty() ? "" : " (--record-raw stores it as the frames' v_ref)");
  pipeline::PipelineOptions o = run_pipeline_options(c, ref);
  if (!backend.why_not_cuda.empty())
    fmt::print(stderr, "eitstream: --backend {} chose cpu: {}\n", c.backend,
               backend.why_not_cuda);

  // From here to the end signals only count: the recorders close (in ~RunSinks) and the summary
  // prints whole, whenever Ctrl-C comes.
  const StopSignals interrupts;
  RunSinks sinks =
      open_run_sinks(c, indices, security, model, *in.source, ref, o,
                     pipeline::resolve_layout(o.stages, *backend.reconstructor, *in.source));
  const sinks::ZmqPublisherOptions& zo = sinks.publisher_options;

  // The pipeline owns the reconstructor; this view of it is read only after pipe.wait().
  const pipeline::Reconstructor& reconstructor = *backend.reconstructor;
  pipeline::Pipeline pipe(model, *in.source, std::move(backend.reconstructor), sinks.all, o);
  fmt::print(stderr,
             "eitstream: {} → model {} ({}, {}×{}) → {} → {} {} on {} (stream '{}', policy {}; "
             "stages {}, latency mode {})\n",
             in.source->describe(), model.id, model.algorithm, model.n_out(), model.n_meas(),
             backend.description, c.push ? "PUSH" : "PUB", zo.lossless ? "lossless" : "live",
             sinks.publisher->endpoint(), c.stream, c.policy, pipeline::layout_name(pipe.layout()),
             c.latency_mode);
  fmt::print(stderr, "eitstream: reference {}\n", ref.description);
  if (const size_t pb = sinks.publisher->publish_batch(); pb > 1 || zo.publish_batch > 1)
    fmt::print(stderr,
               "eitstream: publish batch {}{}: images waiting for the publisher leave together on "
               "topic eit/{}/imgs (docs/protocol.md)\n",
               pb,
               pb < zo.publish_batch
                   ? fmt::format(" (of {} asked: a batch's images stay within {} MiB)",
                                 zo.publish_batch, sinks::kMaxBatchPayloadBytes >> 20)
                   : "",
               c.stream);
  if (!zo.curve_server.secret_z85.empty())
    fmt::print(stderr, "eitstream: CURVE on: server key {}, {} client keys admitted\n",
               zo.curve_server.public_z85, zo.curve_allowed.size());
  if (sinks.recorders.images) fmt::print(stderr, "eitstream: recording images to {}\n", c.record);
  if (sinks.recorders.frames)
    fmt::print(stderr, "eitstream: recording raw frames to {}\n", c.record_raw);

  const RunViewStopper view_stopper = start_run_view(sinks.view, pipe, in.warnings);
  const RunEnd end = run_until_finished(c, pipe, sinks, in.device_source, interrupts);
  const int rc = finish_run(c, pipe.stats(), sinks, in.warnings, end);
  print_gn_summary(stdout, reconstructor);  // gn models: divergences and how the frames fit
  return rc;
}

void attach_run(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("run",
                         "Stream frames through the reconstructor and publish images over ZeroMQ "
                         "(no arguments: synthetic phantom, built-in model, tcp://127.0.0.1:5555)");
  auto cli = std::make_shared<RunConfig>();
  auto config_file = std::make_shared<std::string>();
  add_run_options(*cmd, *cli);
  cmd->add_option("--config", *config_file,
                  "JSON file of options: each key an option's name without '--' and with '_' for "
                  "'-', e.g. {\"fps\": 100, \"record_raw\": \"raw.h5\", \"indices\": "
                  "\"tcp://127.0.0.1:5560\"}; a list for an option taken more than once. Options "
                  "on the command line win");
  auto indices = std::make_shared<RunIndices>();
  cmd->add_option("--indices", indices->endpoint,
                  "Also compute clinical indices and publish them (PUB) on this endpoint: "
                  "eit/<stream>/global per frame, eit/<stream>/breath per breath (docs/indices.md)");
  add_indices_options(*cmd, indices->options, "indices-");
  cmd->footer(
      std::string(
          "Exit status: 0 success, including a stop by --duration, --frames, the end of a "
          "recording, or Ctrl-C/SIGTERM; 1 a wrong file, model or option value found at set-up "
          "(nothing ran); 2 a command line that does not parse (unknown option, not a number); 3 "
          "the backend failed and frames were lost; 4 lossless delivery incomplete (the consumer "
          "missed frames); 5 the source failed (host not resolved, serial device absent, no "
          "valid frame within --source-timeout); 6 a recording stopped (disk full, write error). "
          "When several apply: 3, then 5, 6, 4.") +
      kExitBySignalBeforeSetUp);
  cmd->callback([cmd, cli, config_file, indices] {
    const RunConfig c = merge_run_options(*cmd, *cli, *config_file);
    const int rc = run(c, *indices, run_security_of(c));
    if (rc == 4) throw CommandError("lossless delivery incomplete", rc);
    if (rc != 0) throw CommandError("the backend failed and frames were lost", rc);
  });
}

const RegisterCommand kRun{10, attach_run};

}  // namespace
}  // namespace eit::cli
