// Terminal rendering of a BenchReport: one block per run, then the pyEIT comparison.
#include <fmt/format.h>

#include "eit/bench/bench_report.hpp"

namespace eit::bench {
namespace {

std::string us(int64_t ns) { return fmt::format("{:.2f}", static_cast<double>(ns) * 1e-3); }

std::string row(std::string_view name, const IntervalResult& iv) {
  const auto& s = iv.summary;
  const std::string stamps =
      fmt::format("{}→{}", stamp_column_name(iv.from), stamp_column_name(iv.to));
  std::string line = fmt::format("  {:<14} {:<22} {:>7}", name, stamps, s.n);
  if (s.n == 0) return line + "   (no samples)\n";
  line += fmt::format(" {:>9}", us(s.min_ns));
  for (const auto& pv : s.percentiles)
    line += fmt::format(" {:>9}", pv.quoted ? us(pv.value_ns) : std::string("—"));
  line += fmt::format(" {:>9} {:>9.2f}\n", us(s.max_ns), s.mean_ns * 1e-3);
  return line;
}

std::string rate(double hz) { return hz > 0 ? fmt::format("{:.1f}", hz) : std::string("n/a"); }

}  // namespace

std::string format_table(const BenchReport& report) {
  const auto& m = report.machine;
  std::string out =
      fmt::format("eitstream bench · {} · {} logical CPUs ({} usable) · {} · GPU: {}\n",
                  m.cpu_model, m.logical_cpus, m.usable_cpus, m.kernel, m.gpu);
  for (size_t i = 0; i < report.runs.size(); ++i) {
    const RunResult& r = report.runs[i];
    const PipelineCounters& c = r.counters;
    out += fmt::format("\n── run {}/{}: {} · policy {} · model {}\n", i + 1, report.runs.size(),
                       r.config.label(), r.config.policy, r.config.model);
    out += fmt::format(
        "  {} frames measured ({} warm-up excluded) · offered {} frames/s · delivered {} "
        "frames/s over {:.2f} s\n",
        r.measured, r.warmup_excluded, rate(r.offered_fps), rate(r.delivered_fps), r.window_s);
    out += fmt::format(
        "  measured window: {} not published (dropped in the pipeline or at its sink), {} lost "
        "in transport, {} with stamps out of order\n",
        r.not_published, r.not_received, r.inconsistent);
    out += fmt::format(
        "  whole run: {} produced, {} dropped before the sink, {} dropped at the sink (its queue "
        "or the send), {} non-finite, {} backend errors\n",
        c.produced, c.dropped, c.send_dropped, c.non_finite, c.backend_errors);
    if (c.met_polling > 0)
      out += fmt::format(
          "  {} frames found the idle reconstructor already polling (balanced mode's "
          "expected-arrival window: no wake-up)\n",
          c.met_polling);
    if (c.subscriber_batches > 0)
      out += fmt::format(
          "  publish batch {}: {} of the subscriber's messages were batches (\"imgs\"); {} images "
          "in all\n",
          r.config.publish_batch, c.subscriber_batches, c.subscriber_received);
    out += fmt::format(
        "  CPUs: {}{}\n", describe_cpus(r.config.cpus, "threads not pinned (no --cpus)"),
        r.config.source_yields ? " (the source yields while it polls: a stage shares its CPU)"
                               : "");
    if (!c.queue_high_water.empty()) {
      out += "  queue high-water (whole run):";
      for (const auto& [name, hw] : c.queue_high_water)
        out += fmt::format(" {} {}/{}", name, hw.first, hw.second);
      out += "\n";
    }
    out += fmt::format("  {:<14} {:<22} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
                       "interval (µs)", "stamps", "n", "min", "p50", "p90", "p99", "p99.9", "max",
                       "mean");
    for (const auto& iv : r.intervals) out += row(iv.name, iv);
    out += row("= end to end", r.end_to_end);
    out += row("  pipeline", r.pipeline);
    out += row("  frame→image", r.frame_to_image);
    out += row("  send call", r.send_call);
    double sum_means = 0;
    for (const auto& iv : r.intervals) sum_means += iv.summary.mean_ns;
    out += fmt::format(
        "  Stage intervals add up per frame (largest |Σ − end to end| {} ns); means add up "
        "(Σ {:.2f} µs),\n  percentiles do not. \"—\": too few samples (p99 needs 100, p99.9 needs "
        "1000).\n",
        r.max_sum_error_ns, sum_means * 1e-3);
  }
  out += format_zmq_reference(report);
  out += format_host_noise(report.host_noise);
  out += format_comparison(report);
  return out;
}

std::string format_comparison(const BenchReport& report) {
  if (!report.comparison) return {};
  const Comparison& cmp = *report.comparison;
  if (!cmp.skipped.empty()) return fmt::format("\npyEIT comparison skipped: {}\n", cmp.skipped);
  std::string out = fmt::format("\n── eitstream vs pyEIT on the same frames; eitstream: {}\n",
                                cmp.eitstream_what);
  out += fmt::format("  {:<28} {:>10} {:>10} {:>10} {:>12}   {}\n", "loop", "p50 µs", "p99 µs",
                     "mean µs", "frames/s", "ratios eitstream/pyEIT: p50 · p99 · frames/s");
  const auto p = [](const LatencySummary& s, std::string_view l) {
    const auto* pv = s.find(l);
    return pv && pv->quoted ? static_cast<double>(pv->value_ns) : 0.0;
  };
  const auto ratio = [](double a, double b) {
    return a > 0 && b > 0 ? fmt::format("{:.3g}", a / b) : std::string("—");
  };
  for (const auto& ext : cmp.external) {
    if (ext.run_index >= report.runs.size()) continue;
    const RunResult& run = report.runs[ext.run_index];
    const LatencySummary& ours = run.frame_to_image.summary;
    // Throughput: what eitstream's run at max delivered.
    const double our_fps =
        ext.max_run_index < report.runs.size() ? report.runs[ext.max_run_index].delivered_fps : 0;
    out += fmt::format("  {:<28} {:>10.2f} {:>10.2f} {:>10.2f} {:>12.0f}\n",
                       fmt::format("eitstream (runs {}+{}, {}x{})", ext.run_index + 1,
                                   ext.max_run_index + 1, run.config.n_out, run.config.n_meas),
                       p(ours, "p50") * 1e-3, p(ours, "p99") * 1e-3, ours.mean_ns * 1e-3, our_fps);
    out += fmt::format(
        "  {:<28} {:>10.2f} {:>10.2f} {:>10.2f} {:>12.0f}   {} · {} · {}\n",
        fmt::format("{} ({}x{})", ext.name, ext.n_out, ext.n_meas), p(ext.summary, "p50") * 1e-3,
        p(ext.summary, "p99") * 1e-3, ext.summary.mean_ns * 1e-3, ext.frames_per_s,
        ratio(p(ours, "p50"), p(ext.summary, "p50")), ratio(p(ours, "p99"), p(ext.summary, "p99")),
        ratio(our_fps, ext.frames_per_s));
    out += fmt::format("  {:<28} {} ({})\n", "", ext.what, ext.versions);
  }
  out += "  Latency ratios below 1 and frames/s ratios above 1 mean eitstream is faster.\n";
  return out;
}

const IntervalResult* find_interval(const RunResult& run, std::string_view name) noexcept {
  for (const auto& iv : run.intervals)
    if (iv.name == name) return &iv;
  if (name == run.end_to_end.name) return &run.end_to_end;
  if (name == run.pipeline.name) return &run.pipeline;
  if (name == run.frame_to_image.name) return &run.frame_to_image;
  return nullptr;
}

}  // namespace eit::bench
