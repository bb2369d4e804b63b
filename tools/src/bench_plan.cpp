#include "bench_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend_factory.hpp"
#include "command_registry.hpp"
#include "cpu_list.hpp"
#include "eit/bench/bench_model.hpp"
#include "eit/bench/cpu_pinning.hpp"
#include "eit/recon/default_model.hpp"
#include "eit/recon/model_file.hpp"
#include "eit/sinks/image_batch.hpp"
#include "run_config.hpp"

namespace eit::cli {
namespace {

// An empty option gives no items ("nothing to run" is said later); an empty item in a list is a
// typo that would silently run less than asked, so it is refused.
std::vector<std::string> split_list(const std::string& text, const char* option) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = text.find(',', pos);
    std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty())
      throw CommandError(
          fmt::format("{} '{}': an empty entry (two commas in a row, or one at the start or end)",
                      option, text));
    out.push_back(item);
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
    if (used == text.size() && r > 0 && std::isfinite(r)) return r;
  } catch (const std::exception&) {
  }
  throw CommandError(fmt::format("--rate '{}': expected frames per second (> 0) or 'max'", text));
}

size_t parse_count(const std::string& text, const char* option) {
  try {
    // stoul takes "-1" (as 2^64 − 1) and leading white space: only digits are a count.
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument(text);
    size_t used = 0;
    const unsigned long v = std::stoul(text, &used);
    if (used == text.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw CommandError(fmt::format("{} '{}': expected a whole number ≥ 1", option, text));
}

// Backends come from the shared factory (backend_factory.hpp): the names resolve once to
// cpu or cuda (auto prints why it chose the CPU), and each run builds its reconstructor there.
std::string resolve_bench_backend(const std::string& name) {
  std::string why;
  const std::string chosen = eit::cli::resolve_backend(name, &why);
  if (!why.empty()) fmt::print(stderr, "eitstream bench: --backend {} chose cpu: {}\n", name, why);
  return chosen;
}

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
  for (const auto& s : split_list(sizes, "--size")) {
    const auto [rows, cols] = eit::bench::parse_matrix_size(s);
    models.push_back({fmt::format("random {}x{} (seed 1)", rows, cols),
                      eit::bench::make_random_model(rows, cols)});
  }
  return models;
}

// Every item of a list option is one of `allowed`.
std::vector<std::string> checked_list(const std::string& text, const char* option,
                                      std::initializer_list<std::string_view> allowed) {
  auto items = split_list(text, option);
  for (const auto& item : items)
    if (std::find(allowed.begin(), allowed.end(), item) == allowed.end())
      throw CommandError(
          fmt::format("{} '{}': expected one of {}", option, item, fmt::join(allowed, ", ")));
  return items;
}

// auto: a paced source is a device that cannot wait (live: drop and count); "max" measures the
// sustained throughput, which only a source that waits for room shows (lossless).
std::string policy_for(const BenchArgs& a, double rate) {
  return a.policy != "auto" ? a.policy : rate > 0 ? std::string("live") : std::string("lossless");
}

eit::bench::RunConfig base_config(const BenchArgs& a, const NamedModel& m) {
  eit::bench::RunConfig c;
  c.model = m.description;
  c.n_out = m.model.n_out();
  c.n_meas = m.model.n_meas();
  c.frames = a.frames;
  c.warmup = a.warmup;
  c.cpu_threads = a.cpu_threads;
  c.warm_us = a.warm_us;
  c.source_poll_us = a.source_poll_us;
  c.zmq_io_cpu = a.zmq_io_cpu;
  return c;
}

}  // namespace

eit::bench::CpuRequest parse_cpu_request(const std::string& text) {
  eit::bench::CpuRequest r;
  if (text != "auto") {
    r.list = parse_cpu_list(text);
    return r;
  }
  r.automatic = true;
  try {
    (void)eit::bench::assign_cpus(r, eit::bench::threads_to_pin(false, false),
                                  eit::bench::allowed_cpus());
  } catch (const std::invalid_argument& e) {
    throw CommandError(e.what());
  }
  return r;
}

Axes parse_axes(const BenchArgs& a) {
  Axes x;
  x.models = load_models(a);
  for (const auto& b : split_list(a.backends, "--backend"))
    x.backends.push_back(resolve_bench_backend(b));
  for (const auto& b : split_list(a.batches, "--batch"))
    x.batches.push_back(parse_count(b, "--batch"));
  for (const auto& b : split_list(a.publish_batches, "--publish-batch")) {
    x.publish_batches.push_back(parse_count(b, "--publish-batch"));
    if (x.publish_batches.back() > eit::sinks::kMaxImageBatch)
      throw CommandError(
          fmt::format("--publish-batch '{}': expected 1 to {}", b, eit::sinks::kMaxImageBatch));
  }
  for (const auto& r : split_list(a.rates, "--rate")) x.rates.push_back(parse_rate(r));
  x.transports = checked_list(a.transports, "--transport", {"inproc", "ipc", "tcp", "shm"});
  x.stages = checked_list(a.stages, "--stages", {"auto", "pipelined", "run-to-completion"});
  x.latency_modes = checked_list(a.latency_modes, "--latency-mode", {"spin", "balanced", "idle"});
  x.wake_holds = checked_list(a.wake_holds, "--cpu-wake-hold", {"auto", "on", "off"});
  x.cuda_l2 = checked_list(a.cuda_l2, "--cuda-l2", {"on", "off"});
  x.zmq_io_wakes = checked_list(a.zmq_io_wakes, "--zmq-io-wake", {"preempt", "defer"});
  x.zmq_sends = checked_list(a.zmq_sends, "--zmq-send", {"lane", "inline"});
  if (std::ranges::find(x.zmq_sends, "inline") != x.zmq_sends.end())
    for (size_t pb : x.publish_batches)
      if (std::string why = eit::cli::zmq_send_inline_refusal(a.policy == "lossless", pb);
          !why.empty())
        throw CommandError(std::move(why));
  x.cpus = parse_cpu_request(a.cpus);
  if (a.zmq_io_cpu != "sink" && a.zmq_io_cpu != "own" && a.zmq_io_cpu != "own-idle" &&
      a.zmq_io_cpu != "any")
    throw CommandError(
        fmt::format("--zmq-io-cpu '{}': expected sink, own, own-idle or any", a.zmq_io_cpu));
  // Options that would place nothing are refused, not run as if they had not been given.
  const bool own_io = a.zmq_io_cpu == "own" || a.zmq_io_cpu == "own-idle";
  for (const auto& mode : x.latency_modes)
    if (own_io && mode != "spin")
      throw CommandError(fmt::format(
          "--zmq-io-cpu {}: a CPU of their own for the I/O threads is for --latency-mode spin "
          "only ({} given); use sink or any",
          a.zmq_io_cpu, mode));
  const bool io_placed = x.cpus.any() && a.zmq_io_cpu != "any";
  if (!io_placed && std::ranges::find(x.zmq_io_wakes, "defer") != x.zmq_io_wakes.end())
    throw CommandError(
        "--zmq-io-wake defer: acts on placed I/O threads only; give --cpus (with --zmq-io-cpu "
        "sink, own or own-idle)");
  if (a.policy != "auto" && a.policy != "live" && a.policy != "lossless")
    throw CommandError(fmt::format("--policy '{}': expected auto, live or lossless", a.policy));
  if (x.models.empty() || x.backends.empty() || x.batches.empty() || x.publish_batches.empty() ||
      x.rates.empty() || x.transports.empty() || x.stages.empty() || x.latency_modes.empty() ||
      x.wake_holds.empty() || x.cuda_l2.empty() || x.zmq_io_wakes.empty() || x.zmq_sends.empty())
    throw CommandError("nothing to run: every list option needs at least one value");
  return x;
}

namespace {

// The shared-memory ring has no messages to batch: it runs once, with publish batch 1.
std::vector<size_t> publish_batches_for(const std::string& transport,
                                        const std::vector<size_t>& asked) {
  if (transport == "shm") return {1};
  return asked;
}

// Only the CUDA backend has an L2 to keep H in: other backends run once, whatever --cuda-l2 says.
std::vector<bool> cuda_l2_for(const std::string& backend, const std::vector<std::string>& asked) {
  if (backend != "cuda") return {true};
  std::vector<bool> keep;
  for (const auto& a : asked) keep.push_back(a == "on");
  return keep;
}

// Only ZeroMQ transports have I/O threads: other transports run once, whatever --zmq-io-wake says.
std::vector<std::string> io_wakes_for(const std::string& transport,
                                      const std::vector<std::string>& asked) {
  if (transport != "ipc" && transport != "tcp") return {"preempt"};
  return asked;
}

// Only ZeroMQ transports have a send to move: shm runs once (its sink is always inline). Inline
// sends never wait: an unpaced rate (lossless under --policy auto) keeps its lane.
std::vector<std::string> sends_for(const std::string& transport, const std::string& policy,
                                   const std::vector<std::string>& asked) {
  if (transport == "shm") return {"lane"};
  if (policy == "lossless") return {"lane"};
  return asked;
}

}  // namespace

std::vector<Planned> plan_grid(const BenchArgs& a, const Axes& x) {
  std::vector<Planned> plan;
  for (const auto& m : x.models)
    for (const auto& backend : x.backends)
      for (bool keep_h_in_l2 : cuda_l2_for(backend, x.cuda_l2))
        for (size_t batch : x.batches)
          for (const auto& transport : x.transports)
            for (size_t publish_batch : publish_batches_for(transport, x.publish_batches))
              for (const auto& stages : x.stages)
                for (const auto& mode : x.latency_modes)
                  for (const auto& hold : x.wake_holds)
                    for (const auto& io_wake : io_wakes_for(transport, x.zmq_io_wakes))
                      for (double rate : x.rates)
                        for (const auto& send :
                             sends_for(transport, policy_for(a, rate), x.zmq_sends)) {
                          eit::bench::RunConfig c = base_config(a, m);
                          c.zmq_io_wake = io_wake;
                          c.zmq_send = send;
                          c.backend = backend;
                          c.cuda_l2 = keep_h_in_l2;
                          c.batch = batch;
                          c.publish_batch = publish_batch;
                          c.transport = transport;
                          c.stages = stages;
                          c.latency_mode = mode;
                          c.wake_hold = hold;
                          c.rate_hz = rate;
                          c.policy = policy_for(a, rate);
                          c.cpu_request = x.cpus;
                          plan.push_back({&m, c});
                        }
  return plan;
}

// The pyEIT comparison: times pyEIT, then adds two eitstream runs per pyEIT matrix shape on the
// same frames (paced like pyEIT's latency loop, and at max like its frames/s loop).
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
      c.cpu_request = x.cpus;
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

}  // namespace eit::cli
