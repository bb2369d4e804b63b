// `eitstream bench`: latency and throughput of the real streaming path — source → queue →
// reconstructor → queue → publisher → subscriber in another process — open loop at given rates,
// over models or matrix sizes, backends, batch sizes and transports; per-stage percentiles in a
// table, JSON, CSV and an SVG; optionally pyEIT on the same frames, side by side.
// The library behind it is eit_bench (tools/bench/); this file is argument handling and output.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "command_registry.hpp"
#include "eit/bench/bench_model.hpp"
#include "eit/bench/bench_report.hpp"
#include "eit/bench/bench_runner.hpp"
#include "eit/bench/latency_svg.hpp"
#include "eit/bench/pyeit_comparison.hpp"
#include "backend_factory.hpp"
#include "eit/bench/subscriber_process.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/recon/default_model.hpp"
#include "eit/recon/model_file.hpp"

#ifndef EIT_BENCH_SCRIPT_DIR
#define EIT_BENCH_SCRIPT_DIR "tools/bench"
#endif

namespace {

using eit::cli::CommandError;

struct BenchArgs {
  std::string rates = "50,1000,max";
  std::vector<std::string> models;
  std::string sizes;
  std::string backends = "cpu";
  std::string batches = "16";
  std::string transports = "tcp";
  std::string policy = "auto";
  std::string stages = "auto";
  std::string latency_modes = "balanced";
  size_t frames = 1000;
  size_t warmup = 100;
  std::string json, csv, svg, frames_csv;
  bool quiet = false;
  bool compare_pyeit = false;
  size_t compare_frames = 1000;
  double compare_rate = 1000;
  std::string pyeit_script = std::string(EIT_BENCH_SCRIPT_DIR) + "/bench_vs_pyeit.py";
  std::string subscriber_only;
  size_t subscriber_capacity = 0;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = text.find(',', pos);
    std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

double parse_rate(const std::string& text) {
  if (text == "max") return 0;
  try {
    size_t used = 0;
    const double r = std::stod(text, &used);
    if (used == text.size() && r > 0) return r;
  } catch (const std::exception&) {
  }
  throw CommandError(fmt::format("--rate '{}': expected frames per second (> 0) or 'max'", text));
}

size_t parse_count(const std::string& text, const char* option) {
  try {
    size_t used = 0;
    const unsigned long v = std::stoul(text, &used);
    if (used == text.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw CommandError(fmt::format("{} '{}': expected a whole number ≥ 1", option, text));
}

// Backends come from the shared factory (backend_factory.hpp): the names resolve once to
// cpu or cuda (auto prints why it chose the CPU), and each run builds its reconstructor there.
std::string resolve_backend(const std::string& name) {
  std::string why;
  const std::string chosen = eit::cli::resolve_backend(name, &why);
  if (!why.empty()) fmt::print(stderr, "eitstream bench: --backend {} chose cpu: {}\n", name, why);
  return chosen;
}

std::unique_ptr<eit::pipeline::Reconstructor> make_backend(const eit::bench::RunConfig& c,
                                                           const eit::recon::Model& model) {
  return eit::cli::make_backend(c.backend, model, c.batch).reconstructor;
}

struct NamedModel {
  std::string description;
  eit::recon::Model model;
};

// Prints a progress line at most every 250 ms on a terminal (overwritten), else every 5 s.
class Progress {
 public:
  Progress(bool quiet) : quiet_(quiet), tty_(::isatty(STDERR_FILENO) != 0) {}
  void start(size_t index, size_t count) {
    index_ = index;
    count_ = count;
    last_ns_ = eit::pipeline::now_ns();
  }
  void update(const eit::bench::RunConfig& c, const eit::pipeline::PipelineStats& s) {
    const int64_t now = eit::pipeline::now_ns();
    if (quiet_ || now - last_ns_ < (tty_ ? 250'000'000 : 5'000'000'000)) return;
    last_ns_ = now;
    const std::string line =
        fmt::format("run {}/{} {}: {}/{} frames in, {} out, {} dropped", index_ + 1, count_,
                    c.label(), s.frames_in, c.warmup + c.frames, s.frames_out, s.dropped());
    if (tty_)
      fmt::print(stderr, "\r{:<100}", line);
    else
      fmt::print(stderr, "{}\n", line);
    std::fflush(stderr);
    shown_ = true;
  }
  void done(const eit::bench::RunResult& r) {
    if (quiet_) return;
    if (tty_ && shown_) fmt::print(stderr, "\r{:<100}\r", "");
    const auto& e2e = r.end_to_end.summary;
    const auto* p99 = e2e.find("p99");
    fmt::print(stderr,
               "run {}/{} {}: {} frames, end to end p50 {:.1f} µs, p99 {}, {} dropped, {} lost\n",
               index_ + 1, count_, r.config.label(), r.measured, e2e.percentiles[0].value_ns * 1e-3,
               p99 && p99->quoted ? fmt::format("{:.1f} µs", p99->value_ns * 1e-3) : "—",
               r.not_published, r.not_received);
    shown_ = false;
  }

 private:
  bool quiet_, tty_;
  bool shown_ = false;
  size_t index_ = 0, count_ = 0;
  int64_t last_ns_ = 0;
};

// The axes of the benchmark grid, parsed and checked.
struct Axes {
  std::vector<NamedModel> models;
  std::vector<std::string> backends, transports, stages, latency_modes;
  std::vector<size_t> batches;
  std::vector<double> rates;
};

std::vector<NamedModel> load_models(const BenchArgs& a) {
  std::vector<NamedModel> models;
  for (const auto& path : a.models) {
    if (path == "builtin") {  // what `eitstream run` uses by default
      eit::recon::Model m = eit::recon::default_model();
      models.push_back({fmt::format("built-in ({}, id {})", m.algorithm, m.id), std::move(m)});
      continue;
    }
    eit::recon::Model m = eit::recon::load_model(path);
    models.push_back({fmt::format("{} ({}, id {})", path, m.algorithm, m.id), std::move(m)});
  }
  const std::string sizes = a.sizes.empty() && a.models.empty() ? "1024x208" : a.sizes;
  for (const auto& s : split_list(sizes)) {
    const auto [rows, cols] = eit::bench::parse_matrix_size(s);
    models.push_back({fmt::format("random {}x{} (seed 1)", rows, cols),
                      eit::bench::make_random_model(rows, cols)});
  }
  return models;
}

// Every item of a list option is one of `allowed`.
std::vector<std::string> checked_list(const std::string& text, const char* option,
                                      std::initializer_list<std::string_view> allowed) {
  auto items = split_list(text);
  for (const auto& item : items)
    if (std::find(allowed.begin(), allowed.end(), item) == allowed.end())
      throw CommandError(
          fmt::format("{} '{}': expected one of {}", option, item, fmt::join(allowed, ", ")));
  return items;
}

Axes parse_axes(const BenchArgs& a) {
  Axes x;
  x.models = load_models(a);
  for (const auto& b : split_list(a.backends)) x.backends.push_back(resolve_backend(b));
  for (const auto& b : split_list(a.batches)) x.batches.push_back(parse_count(b, "--batch"));
  for (const auto& r : split_list(a.rates)) x.rates.push_back(parse_rate(r));
  x.transports = checked_list(a.transports, "--transport", {"inproc", "ipc", "tcp"});
  x.stages = checked_list(a.stages, "--stages", {"auto", "pipelined", "run-to-completion"});
  x.latency_modes = checked_list(a.latency_modes, "--latency-mode", {"spin", "balanced", "idle"});
  if (a.policy != "auto" && a.policy != "live" && a.policy != "lossless")
    throw CommandError(fmt::format("--policy '{}': expected auto, live or lossless", a.policy));
  if (x.models.empty() || x.backends.empty() || x.batches.empty() || x.rates.empty() ||
      x.transports.empty() || x.stages.empty() || x.latency_modes.empty())
    throw CommandError("nothing to run: every list option needs at least one value");
  return x;
}

// auto: a paced source is a device that cannot wait (live: drop and count); "max" measures the
// sustained throughput, which only a source that waits for room shows (lossless).
std::string policy_for(const BenchArgs& a, double rate) {
  return a.policy != "auto" ? a.policy : rate > 0 ? std::string("live") : std::string("lossless");
}

struct Planned {
  const NamedModel* model;
  eit::bench::RunConfig config;
  bool comparison = false;  // a run on the pyEIT comparison's frame table
};

eit::bench::RunConfig base_config(const BenchArgs& a, const NamedModel& m) {
  eit::bench::RunConfig c;
  c.model = m.description;
  c.n_out = m.model.n_out();
  c.n_meas = m.model.n_meas();
  c.frames = a.frames;
  c.warmup = a.warmup;
  return c;
}

std::vector<Planned> plan_grid(const BenchArgs& a, const Axes& x) {
  std::vector<Planned> plan;
  for (const auto& m : x.models)
    for (const auto& backend : x.backends)
      for (size_t batch : x.batches)
        for (const auto& transport : x.transports)
          for (const auto& stages : x.stages)
            for (const auto& mode : x.latency_modes)
              for (double rate : x.rates) {
                eit::bench::RunConfig c = base_config(a, m);
                c.backend = backend;
                c.batch = batch;
                c.transport = transport;
                c.stages = stages;
                c.latency_mode = mode;
                c.rate_hz = rate;
                c.policy = policy_for(a, rate);
                plan.push_back({&m, c});
              }
  return plan;
}

// The pyEIT comparison: times pyEIT, then adds two eitstream runs per pyEIT matrix shape on the
// same frames (paced like pyEIT's latency loop, and at max like its frames/s loop).
struct PyeitPart {
  std::optional<eit::bench::PyeitRun> pyeit;
  std::vector<NamedModel> models;  // reserved up front: plan entries point into it
  eit::acquisition::PhantomTable frames;
  size_t first_run = 0;
};

void plan_pyeit(const BenchArgs& a, const Axes& x, PyeitPart& part, std::vector<Planned>& plan) {
  part.first_run = plan.size();
  if (!a.compare_pyeit) return;
  part.frames = eit::bench::make_frame_table(eit::bench::make_random_model(1, 208));
  if (!a.quiet)
    fmt::print(stderr, "pyEIT: timing JAC and GREIT on {} frames (set-up takes a while)…\n",
               a.compare_frames);
  part.pyeit = eit::bench::run_pyeit(a.pyeit_script, part.frames, a.compare_frames, a.compare_rate);
  part.models.reserve(part.pyeit->timings.size());
  for (const auto& t : part.pyeit->timings) {
    part.models.push_back(
        {fmt::format("random {}x{} (the shape of {}'s H)", t.n_out, t.n_meas, t.name),
         eit::bench::make_random_model(t.n_out, t.n_meas)});
    for (double rate : {a.compare_rate, 0.0}) {
      eit::bench::RunConfig c = base_config(a, part.models.back());
      c.backend = x.backends.front();
      c.batch = x.batches.front();
      c.transport = "tcp";
      c.rate_hz = rate;
      c.frames = a.compare_frames;
      c.warmup = std::min<size_t>(a.warmup, a.compare_frames);
      c.policy = policy_for(a, rate);
      plan.push_back({&part.models.back(), c, true});
    }
  }
}

eit::bench::Comparison comparison_of(const BenchArgs& a, const PyeitPart& part) {
  eit::bench::Comparison cmp;
  cmp.skipped = part.pyeit->skipped;
  cmp.eitstream_what = fmt::format(
      "received→sent (frame in → image handed to ZeroMQ) per frame at {:g} frames/s offered, "
      "frames/s from a run at max (lossless), tcp",
      a.compare_rate);
  for (size_t k = 0; k < part.pyeit->timings.size(); ++k) {
    cmp.external.push_back(part.pyeit->timings[k]);
    cmp.external.back().run_index = part.first_run + 2 * k;
    cmp.external.back().max_run_index = part.first_run + 2 * k + 1;
  }
  return cmp;
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
    const int code = eit::bench::run_subscriber_child(a.subscriber_only, a.subscriber_capacity);
    if (code != 0) throw CommandError("bench subscriber: could not write its record", code);
    return;
  }
  eit::bench::BenchReport report;
  report.machine = eit::bench::collect_machine_info();
  const Axes axes = parse_axes(a);
  if (std::find(axes.backends.begin(), axes.backends.end(), "cuda") != axes.backends.end())
    report.machine.gpu = eit::cli::cuda_device_description();
  std::vector<Planned> plan = plan_grid(a, axes);
  PyeitPart pyeit;
  plan_pyeit(a, axes, pyeit, plan);

  eit::bench::RunEnvironment env;
  env.make_backend = make_backend;
  env.executable = eit::bench::current_executable();
  Progress progress(a.quiet);
  env.progress = [&](const eit::bench::RunConfig& c, const eit::pipeline::PipelineStats& s) {
    progress.update(c, s);
  };

  std::vector<std::unique_ptr<eit::bench::StampRecorder>> recorders;
  for (size_t i = 0; i < plan.size(); ++i) {
    progress.start(i, plan.size());
    const auto& table =
        plan[i].comparison ? pyeit.frames : eit::bench::make_frame_table(plan[i].model->model);
    auto out = eit::bench::run_benchmark(plan[i].model->model, table, plan[i].config, env);
    progress.done(out.result);
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
          "                  --frames 5000 --json bench.json --svg bench.svg");
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
      cmd->add_option("--transport", args->transports, "inproc, ipc, tcp (comma-separated)")
          ->capture_default_str();
      cmd->add_option(
             "--policy", args->policy,
             "live (drop newest, counted), lossless (wait), or auto: live at a given rate, "
             "lossless at max")
          ->capture_default_str();
      cmd->add_option("--stages", args->stages,
                      "Pipeline layout(s): auto, pipelined, run-to-completion (comma-separated)")
          ->capture_default_str();
      cmd->add_option("--latency-mode", args->latency_modes,
                      "How stages wait: spin, balanced, idle (comma-separated)")
          ->capture_default_str();
      cmd->add_option("--frames", args->frames, "Measured frames per run")->capture_default_str();
      cmd->add_option("--warmup", args->warmup, "Frames excluded at the start of each run")
          ->capture_default_str();
      cmd->add_option("--json", args->json, "Write the full report as JSON");
      cmd->add_option("--csv", args->csv, "Write per-run, per-stage statistics as CSV");
      cmd->add_option("--svg", args->svg, "Write latency CDFs and latency over time as SVG");
      cmd->add_option("--frames-csv", args->frames_csv, "Write every frame's stamps as CSV");
      cmd->add_flag("--quiet", args->quiet, "No progress lines on stderr");
      cmd->add_flag("--compare-pyeit", args->compare_pyeit,
                    "Also time pyEIT (JAC, GREIT solve + pyzmq publish) on the same frames");
      cmd->add_option("--compare-frames", args->compare_frames, "Frames for the pyEIT comparison")
          ->capture_default_str();
      cmd->add_option("--compare-rate", args->compare_rate,
                      "Offered rate of eitstream's comparison runs")
          ->capture_default_str();
      cmd->add_option("--pyeit-script", args->pyeit_script, "Path of bench_vs_pyeit.py")
          ->capture_default_str();
      cmd->add_option("--subscriber-only", args->subscriber_only,
                      "Internal: run only the measuring subscriber on ENDPOINT")
          ->group("");
      cmd->add_option("--subscriber-capacity", args->subscriber_capacity)->group("");
      cmd->callback([args] { run_bench(*args); });
    }};
