#include "run_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "eit/pipeline/clock.hpp"

namespace eit::cli {
namespace {

// A stop's wait shorter than this is the status loop's 20 ms sampling, not worth a line.
constexpr double kStopWaitShown = 0.1;

std::string us(int64_t ns) { return fmt::format("{:.1f}", static_cast<double>(ns) / 1e3); }

// "zmq 3 (queue 2, send 1)" per sink: frames that sink missed, whether its own queue was full or
// its send gave up. A frame two sinks missed counts once for each, so there is no total.
std::string per_sink_drops(const pipeline::PipelineStats& s) {
  std::string out;
  for (size_t i = 0; i < s.sink_queues.size(); ++i) {
    const auto& q = s.sink_queues[i];
    const uint64_t sent_drops = i < s.sinks.size() ? s.sinks[i].dropped : 0;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {} (queue {}, send {})", q.name, s.sink_missed(i), q.queue.dropped,
                       sent_drops);
  }
  return out;
}

// "sink zmq: sent 990, dropped 10 (queue 8, send 2), send errors 0" per sink, one line each.
std::string per_sink_lines(const pipeline::PipelineStats& s) {
  std::string out;
  for (size_t i = 0; i < s.sink_queues.size(); ++i) {
    const auto& q = s.sink_queues[i];
    const pipeline::SinkStats own = i < s.sinks.size() ? s.sinks[i] : pipeline::SinkStats{};
    out += fmt::format("sink {}: sent {}, dropped {} (queue {}, send {}), send errors {}\n", q.name,
                       own.sent, s.sink_missed(i), q.queue.dropped, own.dropped, own.errors);
  }
  return out;
}

}  // namespace

std::string source_status(const pipeline::SourceStats& s) {
  std::string out;
  if (s.reconnects) out += fmt::format(" | reconnects {}", s.reconnects);
  if (s.bad_frames) out += fmt::format(" | rejected frames {}", s.bad_frames);
  if (s.seq_gaps) out += fmt::format(" | missing by seq {}", s.seq_gaps);
  if (s.reordered) out += fmt::format(" | dropped by seq {} (repeated or behind)", s.reordered);
  if (s.bytes_skipped) out += fmt::format(" | bytes skipped {}", s.bytes_skipped);
  if (!s.last_error.empty()) out += fmt::format(" | source: {}", s.last_error);
  return out;
}

StatusLine::StatusLine(const pipeline::Pipeline& p)
    : pipeline_(p), last_hist_(p.latency(pipeline::kSpanTotal)), last_ns_(pipeline::now_ns()) {}

std::string StatusLine::next() {
  const auto s = pipeline_.stats();
  const auto hist = pipeline_.latency(pipeline::kSpanTotal);
  const auto window = hist.since(last_hist_);
  const double dt = static_cast<double>(s.now_ns - last_ns_) / 1e9;
  const double fps = dt > 0 ? static_cast<double>(s.frames_out - last_out_) / dt : 0;
  last_hist_ = hist;
  last_out_ = s.frames_out;
  last_ns_ = s.now_ns;
  const double elapsed = static_cast<double>(s.now_ns - s.started_ns) / 1e9;
  std::string line = fmt::format(
      "[{:7.1f} s] {:7.1f} frames/s | latency p50 {} µs p99 {} µs | frames {} | drops: input {}; "
      "sinks: {} | {} {} {}",
      elapsed, fps, window.count() ? us(window.percentile(0.5)) : "-",
      window.count() ? us(window.percentile(0.99)) : "-", s.frames_out, s.dropped(),
      per_sink_drops(s), s.backend, s.layout, s.latency_mode);
  if (s.non_finite) line += fmt::format(" | non-finite {}", s.non_finite);
  if (s.backend_faults) line += fmt::format(" | backend faults {}", s.backend_faults);
  line += source_status(s.source);
  // The pipeline's last fault (a refused reference: images stay empty until one is accepted).
  if (!s.error.empty()) line += fmt::format(" | error: {}", s.error);
  return line;
}

std::string final_summary(const pipeline::PipelineStats& s, double stop_wait_s) {
  const double wall = static_cast<double>(s.now_ns - s.started_ns) / 1e9;
  stop_wait_s = std::clamp(stop_wait_s, 0.0, std::max(wall, 0.0));
  const double elapsed = wall - stop_wait_s;  // streaming
  std::string out = fmt::format(
      "frames: in {}, reconstructed {}, lost before the sinks {} (input queue {}), taken as the "
      "reference {}, non-finite {}, backend faults {}, lost on fault {}\n",
      s.frames_in, s.frames_reconstructed, s.dropped(), s.input.dropped, s.reference_frames,
      s.non_finite, s.backend_faults, s.lost_on_fault);
  if (s.frames_in > 0 && s.frames_reconstructed == 0 && s.reference_frames == s.frames_in)
    out += fmt::format(
        "warning: all {} frames were taken as the reference (the stream ended during its "
        "capture), so no image was made: give a shorter --reference first:N, or a longer "
        "stream\n",
        s.frames_in);
  out += per_sink_lines(s);
  out += fmt::format(
      "run: {:.2f} s, {:.1f} frames/s to the sinks, backend {}, stages {}, latency mode {}, "
      "queue high-water: input {}/{}",
      elapsed, elapsed > 0 ? static_cast<double>(s.frames_out) / elapsed : 0.0, s.backend, s.layout,
      s.latency_mode, s.input.high_water, s.input.capacity);
  for (const auto& q : s.sink_queues)
    out += q.runs_inline ? fmt::format(", sink {} inline", q.name)
                         : fmt::format(", sink {} {}/{}{}", q.name, q.queue.high_water,
                                       q.queue.capacity, q.blocks ? " (blocking)" : "");
  out += "\n";
  if (stop_wait_s >= kStopWaitShown)
    out += fmt::format(
        "stop: waited {:.2f} s for the sinks to finish (a lossless consumer, NATS, a recording) "
        "with no image moving; not in run's time and frames/s\n",
        stop_wait_s);
  if (s.source.bad_frames || s.source.seq_gaps || s.source.reordered || s.source.bytes_skipped)
    out += fmt::format(
        "source: {} bad frames, {} frames missing by seq, {} dropped by seq (repeated or "
        "behind), {} bytes skipped\n",
        s.source.bad_frames, s.source.seq_gaps, s.source.reordered, s.source.bytes_skipped);
  if (s.source.reconnects) out += fmt::format("source: {} reconnects\n", s.source.reconnects);
  if (!s.source.last_error.empty())
    out += fmt::format("source: last problem: {}\n", s.source.last_error);
  // Each column starts with a space, so values wider than the column (a stall of seconds is
  // 7+ digits of µs) stay apart.
  out += fmt::format("{:<21} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}   (µs)\n", "latency", "p50", "p90",
                     "p99", "p99.9", "max", "mean");
  auto row = [&](std::string_view name, const pipeline::LatencySummary& l) {
    if (l.count == 0) return;
    out += fmt::format("  {:<19} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9.1f}\n", name, us(l.p50_ns),
                       us(l.p90_ns), us(l.p99_ns), us(l.p999_ns), us(l.max_ns), l.mean_ns / 1e3);
  };
  for (size_t i = 0; i < pipeline::kSpanCount; ++i)
    row(pipeline::kLatencySpans[i].name, s.latency[i]);
  row("sink call", s.sink_call);
  if (!s.error.empty()) out += fmt::format("error: {}\n", s.error);
  return out;
}

}  // namespace eit::cli
