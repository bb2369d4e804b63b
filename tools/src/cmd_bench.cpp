// `eitstream bench`: latency and throughput of the real streaming path — source → queue →
// reconstructor → queue → publisher → subscriber in another process — open loop at given rates,
// over models or matrix sizes, backends, batch sizes and transports; per-stage percentiles in a
// table, JSON, CSV and an SVG; optionally pyEIT on the same frames, side by side.
// The library behind it is eit_bench (tools/bench/); this file is argument handling and output.
// Planning the runs: bench_plan.hpp; progress lines: bench_progress.hpp.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "backend_factory.hpp"
#include "bench_host_noise.hpp"
#include "bench_outputs.hpp"
#include "bench_plan.hpp"
#include "bench_progress.hpp"
#include "bench_reference.hpp"
#include "command_registry.hpp"
#include "eit/bench/bench_model.hpp"
#include "eit/bench/bench_report.hpp"
#include "eit/bench/bench_runner.hpp"
#include "eit/bench/latency_svg.hpp"
#include "eit/bench/subscriber_process.hpp"
#include "option_checks.hpp"

namespace {

using eit::cli::Axes;
using eit::cli::BenchArgs;
using eit::cli::CommandError;
using eit::cli::Planned;
using eit::cli::Progress;
using eit::cli::PyeitPart;

std::unique_ptr<eit::pipeline::Reconstructor> make_backend(const eit::bench::RunConfig& c,
                                                           const eit::recon::Model& model) {
  return eit::cli::make_backend(c.backend, model, c.batch, c.cpu_threads, false, c.cuda_l2)
      .reconstructor;
}

void write_outputs(const BenchArgs& a, const eit::bench::BenchReport& report,
                   const std::vector<std::unique_ptr<eit::bench::StampRecorder>>& recorders) {
  fmt::print("{}", eit::bench::format_table(report));
  if (!a.json.empty()) eit::bench::write_json(report, a.json);
  if (!a.csv.empty()) eit::bench::write_summary_csv(report, a.csv);
  if (!a.svg.empty()) eit::bench::write_latency_svg(report, a.svg);
  if (!a.frames_csv.empty()) {
    std::vector<std::pair<const eit::bench::StampRecorder*, const eit::bench::RunResult*>> rows;
    for (size_t i = 0; i < report.runs.size(); ++i)
      rows.emplace_back(recorders[i].get(), &report.runs[i]);
    eit::bench::write_frames_csv(rows, a.frames_csv);
  }
}

void run_bench(const BenchArgs& a) {
  if (!a.subscriber_only.empty()) {
    const int code = eit::bench::run_subscriber_child(
        a.subscriber_only, a.subscriber_capacity,
        {a.subscriber_pull, a.subscriber_spin, a.subscriber_cpu, a.subscriber_io_cpu});
    if (code != 0) throw CommandError("bench subscriber: could not write its record", code);
    return;
  }
  eit::cli::check_bench_outputs(a);
  eit::bench::BenchReport report;
  report.machine = eit::bench::collect_machine_info();
  const Axes axes = parse_axes(a);
  if (std::find(axes.backends.begin(), axes.backends.end(), "cuda") != axes.backends.end())
    report.machine.gpu = eit::cli::cuda_device_description();
  std::vector<Planned> plan = plan_grid(a, axes);
  PyeitPart pyeit;
  plan_pyeit(a, axes, pyeit, plan);
  const eit::cli::ReferencePlan references(a.zmq_reference, plan, report);
  const eit::cli::HostNoisePlan host_noise(a.host_noise, axes.cpus);

  eit::bench::RunEnvironment env;
  env.make_backend = make_backend;
  env.executable = eit::bench::current_executable();
  Progress progress(a.quiet);
  env.progress = [&](const eit::bench::RunConfig& c, const eit::pipeline::PipelineStats& s) {
    progress.update(c, s);
  };

  report.host_noise = host_noise.run(a.quiet);
  std::vector<std::unique_ptr<eit::bench::StampRecorder>> recorders;
  for (size_t i = 0; i < plan.size(); ++i) {
    progress.start(i, plan.size());
    const auto& table =
        plan[i].comparison ? pyeit.frames : eit::bench::make_frame_table(plan[i].model->model);
    auto out = eit::bench::run_benchmark(plan[i].model->model, table, plan[i].config, env);
    progress.done(out.result);
    if (!plan[i].comparison)
      references.after_run(out.result.config, env.executable, a.quiet, report);
    report.runs.push_back(std::move(out.result));
    recorders.push_back(std::move(out.recorder));
  }
  if (pyeit.pyeit) report.comparison = comparison_of(a, pyeit);
  write_outputs(a, report, recorders);
}

}  // namespace

static const eit::cli::RegisterCommand kBench{
    60, [](CLI::App& app) {
      auto args = std::make_shared<BenchArgs>();
      auto* cmd = app.add_subcommand(
          "bench",
          "Measure latency and throughput of the real pipeline, stage by stage, open loop");
      cmd->footer(
          "Each frame is timed from its scheduled time (t0 + i/rate), so a late pipeline shows up "
          "as\n"
          "latency, never as a slower schedule. Stage intervals are differences of consecutive "
          "stamps\n"
          "(scheduled, received, enqueued, dequeued, submitted, done, published, subscribed) and "
          "add\n"
          "up per frame to the end-to-end latency; 'sent' (the send call returned) is reported on "
          "the\n"
          "side. Method and results: docs/benchmarks.md. Example:\n"
          "  eitstream bench --rate 50,1000,max --size 1024x208 --transport inproc,ipc,tcp \\\n"
          "                  --frames 5000 --json bench.json --svg bench.svg\n"
          "Exit status: 0 success; 1 a wrong option value, model or output file (checked before "
          "the first run), or a run that failed; 2 a command line that does not parse. SIGINT or "
          "SIGTERM ends it at once with 128 + the signal (130, 143; SIGKILL 137) and writes no "
          "report.");
      cmd->add_option("--rate", args->rates, "Offered rates, frames/s or 'max' (comma-separated)")
          ->capture_default_str();
      cmd->add_option("--model", args->models,
                      "Model file(s) (.h5) to reconstruct with, or 'builtin' (the model of "
                      "`eitstream run`)");
      cmd->add_option(
          "--size", args->sizes,
          "Random H of these sizes, ROWSxMEAS (comma-separated; default 1024x208 when no "
          "--model is given)");
      cmd->add_option("--backend", args->backends, "cpu, cuda or auto (comma-separated)")
          ->capture_default_str();
      cmd->add_option("--batch", args->batches, "Largest micro-batch (comma-separated)")
          ->capture_default_str();
      cmd->add_option("--publish-batch", args->publish_batches,
                      "Most images per ZeroMQ message, as `run --publish-batch` (comma-separated; "
                      "not for shm)")
          ->capture_default_str();
      cmd->add_option("--transport", args->transports, "inproc, ipc, tcp, shm (comma-separated; shm: the shared-memory ring, live)")
          ->capture_default_str();
      cmd->add_option(
             "--policy", args->policy,
             "live (drop newest, counted; PUB to a SUB), lossless (wait; PUSH to a PULL, so "
             "frames/s counts delivered frames), or auto: live at a given rate, lossless at max")
          ->capture_default_str();
      cmd->add_option("--stages", args->stages,
                      "Pipeline layout(s): auto, pipelined, run-to-completion (comma-separated)")
          ->capture_default_str();
      cmd->add_option("--latency-mode", args->latency_modes,
                      "How stages wait: spin, balanced, idle (comma-separated); spin also "
                      "busy-polls the subscriber, makes the source poll the clock for the whole "
                      "frame period (it never sleeps: a dedicated host; see --cpus), keeps "
                      "CPUs out of deep idle states where /dev/cpu_dma_latency is writable. With "
                      "--cpus, every mode puts ZeroMQ's I/O threads on the sink's CPU "
                      "(--zmq-io-cpu)")
          ->capture_default_str();
      cmd->add_option("--cuda-l2", args->cuda_l2,
                      "CUDA backend: on keeps as much of an H over 32 MiB in the device's "
                      "persisting L2 as fits, where that is at least half of it (as run does); "
                      "off streams all of H from memory for every frame; on,off runs both, for "
                      "comparing (label 'l2off'). Other backends run once")
          ->capture_default_str();
      cmd->add_option("--cpu-wake-hold", args->wake_holds,
                      "Keep CPUs out of deep idle during each run (as `eitstream run "
                      "--cpu-wake-hold`): auto (spin runs only), on, off (comma-separated); the "
                      "bare ZeroMQ reference of a run takes the hold when the run does. Labels "
                      "say 'hold' or 'nohold' where it differs from the mode's default")
          ->capture_default_str();
      cmd->add_option(
             "--zmq-reference", args->zmq_reference,
             fmt::format("Bare ZeroMQ beside each run set-up: a plain send loop with the runs' "
                         "transport, socket and options, message size, pacing, frame count, "
                         "latency mode and subscriber, timed send → receive; the table and JSON "
                         "then show end to end and published→subscribed as ratios to it, and "
                         "each run's send call beside the loop's. on, "
                         "off, or auto: on when these loops add at most {:g} s in all (each "
                         "lasts as long as its schedule, (warm-up + frames) / rate)",
                         eit::cli::kAutoBudgetSeconds))
          ->capture_default_str();
      cmd->add_option(
             "--host-noise", args->host_noise,
             fmt::format(
                 "Before the first run, spin one pinned thread on each CPU the runs pin, all at "
                 "once, and count the stalls (gaps of at least {} µs between two clock reads: "
                 "interrupts, other tasks, a hypervisor taking the vCPU away), per second at "
                 "≥10, ≥50 and ≥100 µs, the longest and the time lost: the floor under the "
                 "runs' tail percentiles. auto: {:g} s on the CPUs of --cpus, nothing without "
                 "it; SECONDS: that long (every CPU the process may use when --cpus is not "
                 "given); off or 0: no probe",
                 eit::bench::kLostFromNs / 1000, eit::bench::kDefaultHostNoiseSeconds))
          ->capture_default_str();
      cmd->add_option(
          "--cpus", args->cpus,
          "Pin each run's threads to CPUs: a comma-separated list (as `eitstream run --cpus`), "
          "taken in the order source, subscriber, reconstructor (pipelined runs), sink thread "
          "(not for shm, which publishes inline), round robin when shorter; or auto: distinct "
          "CPUs the process may use, CPU 0 left out when there are more CPUs than threads "
          "(refused when fewer). The bare ZeroMQ reference's sender runs on the source's CPU, "
          "its receiver on the subscriber's. The table and JSON say which CPU each thread got "
          "and whether pinning succeeded. Without --cpus nothing is pinned");
      cmd->add_option(
             "--zmq-io-cpu", args->zmq_io_cpu,
             "With --cpus, ZeroMQ transports: sink (any latency mode) puts both ends' ZeroMQ I/O "
             "threads on the sink thread's CPU (the reference's on its sender's), whose polls "
             "yield to them, as `eitstream run` does; spin mode only: own puts them together on "
             "one more CPU that no other thread of the run has (--cpus auto takes one more; the "
             "reference's "
             "likewise), so the send call only hands the message over, with a lowest-priority "
             "spinner keeping that CPU out of idle; own-idle is own without the spinner (the "
             "I/O threads then wake on an idle CPU: slower on virtual machines, "
             "docs/benchmarks.md); any leaves them where the kernel puts them. own, own-idle "
             "and any are for measuring")
          ->capture_default_str();
      cmd->add_option("--zmq-io-wake", args->zmq_io_wakes,
                      "Placed I/O threads (--cpus): preempt lets the kernel run one inside the "
                      "send call that wakes it (on the sink's CPU, the send then includes the "
                      "transport's work); defer starts them at SCHED_BATCH, so they run when the "
                      "sending thread yields, as `eitstream run --zmq-io-wake`; preempt,defer "
                      "runs both (label 'defer'; ipc and tcp only), the reference placed alike")
          ->capture_default_str();
      cmd->add_option("--zmq-send", args->zmq_sends,
                      "ZeroMQ publisher: lane gives it its own sink thread and queue; inline "
                      "sends on the thread that finished the frame (live policy, --publish-batch "
                      "1; the I/O threads placed on that thread's CPU), as `eitstream run "
                      "--zmq-send`; lane,inline runs both (label 'inline'; unpaced lossless runs "
                      "keep their lane)")
          ->capture_default_str();
      cmd->add_option("--warm-us", args->warm_us,
                      "Idle reconstructor re-reads H this often (µs) to keep it cached, as "
                      "`eitstream run --warm-us`; 0 = never (label 'warm0' where not the default)")
          ->capture_default_str();
      cmd->add_option("--source-poll-us", args->source_poll_us,
                      "Paced runs in balanced and idle modes: the source sleeps until this many µs "
                      "before each frame is due, then polls the clock, so the host's late timer "
                      "wake-up is not counted as latency (a device's frame is stamped when it "
                      "arrives); 0 = sleep until due (label 'poll0' where not the default). "
                      "Spin mode polls the whole wait")
          ->capture_default_str()
          ->check(CLI::Range(size_t{0}, size_t{1'000'000}));
      cmd->add_option("--cpu-threads", args->cpu_threads,
                      "Threads the CPU backend splits each batch over (rows of H)")
          ->capture_default_str();
      cmd->add_option("--frames", args->frames, "Measured frames per run")->capture_default_str();
      cmd->add_option("--warmup", args->warmup, "Frames excluded at the start of each run")
          ->capture_default_str();
      cmd->add_option("--json", args->json, "Write the full report as JSON");
      cmd->add_option("--csv", args->csv, "Write per-run, per-stage statistics as CSV");
      cmd->add_option("--svg", args->svg, "Write latency CDFs and latency over time as SVG");
      cmd->add_option("--frames-csv", args->frames_csv, "Write every frame's stamps as CSV");
      cmd->add_flag("--force", args->force,
                    "Replace --json, --csv, --svg and --frames-csv files that exist (without it, "
                    "an existing one is refused before the first run)");
      cmd->add_flag("--quiet", args->quiet, "No progress lines on stderr");
      cmd->add_flag("--compare-pyeit", args->compare_pyeit,
                    "Also time pyEIT (JAC, GREIT solve + pyzmq publish) on the same frames");
      cmd->add_option("--compare-frames", args->compare_frames, "Frames for the pyEIT comparison")
          ->capture_default_str()
          ->check(eit::cli::within(1, 1e9, false, false));
      cmd->add_option("--compare-rate", args->compare_rate,
                      "Offered rate (frames/s) of the paced comparison runs, eitstream's and "
                      "pyEIT's")
          ->capture_default_str()
          ->check(eit::cli::positive());
      cmd->add_option("--pyeit-script", args->pyeit_script, "Path of bench_vs_pyeit.py")
          ->capture_default_str();
      cmd->add_option("--subscriber-only", args->subscriber_only,
                      "Internal: run only the measuring subscriber on ENDPOINT")
          ->group("");
      cmd->add_option("--subscriber-capacity", args->subscriber_capacity)->group("");
      cmd->add_flag("--subscriber-pull", args->subscriber_pull)->group("");
      cmd->add_flag("--subscriber-spin", args->subscriber_spin)->group("");
      cmd->add_option("--subscriber-cpu", args->subscriber_cpu)->group("");
      cmd->add_option("--subscriber-io-cpu", args->subscriber_io_cpu)->group("");
      cmd->callback([args] { run_bench(*args); });
    }};
