// The bare-ZeroMQ reference in the reports: its own rows, then every run's end to end and
// published→subscribed hop next to the reference of its set-up, as ratios.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eit/bench/bench_report.hpp"
#include "eit/bench/zmq_reference.hpp"

namespace eit::bench {
namespace {

using nlohmann::json;

// The quoted value of a percentile in ns, or 0 (too few samples, or none).
int64_t quoted(const LatencySummary& s, std::string_view label) noexcept {
  const PercentileValue* pv = s.find(label);
  return pv && pv->quoted ? pv->value_ns : 0;
}

std::string us(int64_t ns) {
  return ns > 0 ? fmt::format("{:.2f}", static_cast<double>(ns) * 1e-3) : std::string("—");
}

double ratio(int64_t a, int64_t b) noexcept {
  return a > 0 && b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0;
}

std::string ratio_text(double r) { return r > 0 ? fmt::format("{:.2f}", r) : std::string("—"); }

json ratio_json(double r) { return r > 0 ? json(r) : json(nullptr); }

// One run beside its reference: the four figures compared and their ratios.
struct Beside {
  size_t run = 0, ref = 0;
  int64_t e2e[2] = {}, hop[2] = {}, bare[2] = {};  // p50, p99 (ns; 0: not quoted)
  int64_t call[2] = {}, bare_call[2] = {};  // the send call: the run's sinks', the plain loop's
  double e2e_ratio[2] = {}, hop_ratio[2] = {};
  // At max only (a paced run delivers its schedule): frames/s delivered to the subscriber.
  double fps = 0, bare_fps = 0, fps_ratio = 0;
  bool lossy = false;  // frames lost on either side (a live ring): frames/s counts those received
};

std::vector<Beside> pair_runs(const BenchReport& report) {
  std::vector<Beside> out;
  for (size_t i = 0; i < report.runs.size(); ++i) {
    const RunResult& run = report.runs[i];
    const ZmqReference* ref = reference_for(report, run.config);
    const IntervalResult* hop = find_interval(run, "transport");
    if (!ref || !hop) continue;
    Beside b;
    b.run = i;
    b.ref = static_cast<size_t>(ref - report.zmq_references.data());
    const char* labels[2] = {"p50", "p99"};
    for (int k = 0; k < 2; ++k) {
      b.e2e[k] = quoted(run.end_to_end.summary, labels[k]);
      b.hop[k] = quoted(hop->summary, labels[k]);
      b.bare[k] = quoted(ref->one_way, labels[k]);
      b.e2e_ratio[k] = ratio(b.e2e[k], b.bare[k]);
      b.hop_ratio[k] = ratio(b.hop[k], b.bare[k]);
      b.call[k] = quoted(run.send_call.summary, labels[k]);
      b.bare_call[k] = quoted(ref->send_call, labels[k]);
    }
    if (run.config.rate_hz <= 0 && run.delivered_fps > 0 && ref->delivered_fps > 0) {
      b.fps = run.delivered_fps;
      b.bare_fps = ref->delivered_fps;
      b.fps_ratio = b.fps / b.bare_fps;
      b.lossy = ref->lost + ref->send_dropped + run.not_published + run.not_received > 0;
    }
    out.push_back(b);
  }
  return out;
}

std::string rate_text(double hz) { return hz > 0 ? fmt::format("{:g} Hz", hz) : "max"; }

std::string fps_text(double fps) { return fps > 0 ? fmt::format("{:.0f}", fps) : "—"; }

}  // namespace

const ZmqReference* reference_for(const BenchReport& report, const RunConfig& run) noexcept {
  for (const auto& ref : report.zmq_references)
    if (same_setup(ref, run)) return &ref;
  return nullptr;
}

std::string format_zmq_reference(const BenchReport& report) {
  if (!report.zmq_reference_skipped.empty())
    return fmt::format("\nbare ZeroMQ reference skipped: {}\n", report.zmq_reference_skipped);
  if (report.zmq_references.empty()) return {};
  std::string out =
      "\n── bare ZeroMQ, transport floor: the runs' socket and options, message size, pacing, "
      "latency mode\n   and subscriber; messages sent from a plain loop (no pipeline). One-way "
      "send → receive, µs.\n";
  out += fmt::format(
      "  {:<4} {:<7} {:<5} {:<9} {:>9} {:>7} {:>7} {:>8} {:>7} {:>5} {:>8} {:>8} "
      "{:>8} {:>8} {:>10}\n",
      "ref", "transp.", "sock", "mode", "rate", "bytes", "sent", "received", "n", "lost", "p50",
      "p99", "p99.9", "max", "frames/s");
  for (size_t i = 0; i < report.zmq_references.size(); ++i) {
    const ZmqReference& r = report.zmq_references[i];
    out += fmt::format(
        "  Z{:<3} {:<7} {:<5} {:<9} {:>9} {:>7} {:>7} {:>8} {:>7} {:>5} {:>8} {:>8} {:>8} {:>8} "
        "{:>10}\n",
        i + 1, r.transport, r.pattern, r.latency_mode, rate_text(r.rate_hz), r.message_bytes,
        r.sent, r.received, r.measured, r.lost, us(quoted(r.one_way, "p50")),
        us(quoted(r.one_way, "p99")), us(quoted(r.one_way, "p99.9")), us(r.one_way.max_ns),
        fps_text(r.delivered_fps));
    if (!r.cpu_wake_hold.empty())
      out += fmt::format("       sender's cpu wake-up hold: {}\n", r.cpu_wake_hold);
    if (!r.cpu_keeper.empty()) out += fmt::format("       zmq io cpu: {}\n", r.cpu_keeper);
    if (r.zmq_io_wake == "defer")
      out += "       zmq io threads: defer to the sender (SCHED_BATCH)\n";
    if (!r.cpus.empty()) out += fmt::format("       CPUs: {}\n", describe_cpus(r.cpus, ""));
    if (r.send_call.n > 0)
      out += fmt::format("       send call: p50 {}, p99 {}, max {} µs\n",
                         us(quoted(r.send_call, "p50")), us(quoted(r.send_call, "p99")),
                         us(r.send_call.max_ns));
  }
  out +=
      "  frames/s: measured messages over first send → last receive (at max: what the transport "
      "alone delivers).\n";
  const auto pairs = pair_runs(report);
  if (pairs.empty()) return out;
  out +=
      "── eitstream beside bare ZeroMQ (µs): end to end (scheduled→subscribed) and its hop "
      "(published→subscribed)\n";
  out += fmt::format(
      "  {:<8} {:<4} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} "
      "{:>10} {:>8}  {}\n",
      "run", "ref", "e2e p50", "e2e p99", "hop p50", "hop p99", "bare p50", "bare p99", "e2e÷bare",
      "(p99)", "hop÷bare", "(p99)", "frames/s", "bare f/s", "f/s÷bare", "label");
  bool any_lossy = false;
  for (const Beside& b : pairs) {
    any_lossy = any_lossy || b.lossy;
    out += fmt::format(
        "  run {:<4} Z{:<3} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} "
        "{:>10} {:>8}  {}\n",
        b.run + 1, b.ref + 1, us(b.e2e[0]), us(b.e2e[1]), us(b.hop[0]), us(b.hop[1]), us(b.bare[0]),
        us(b.bare[1]), ratio_text(b.e2e_ratio[0]), ratio_text(b.e2e_ratio[1]),
        ratio_text(b.hop_ratio[0]), ratio_text(b.hop_ratio[1]), fps_text(b.fps),
        fps_text(b.bare_fps), ratio_text(b.fps_ratio) + (b.lossy ? "*" : ""),
        report.runs[b.run].config.label());
  }
  out +=
      "  Ratios: eitstream ÷ bare ZeroMQ at the same percentile; 1.00 would be the transport "
      "alone.\n  frames/s (runs at max only): delivered to the subscriber; f/s÷bare 1.00: the "
      "publisher path delivers what the bare transport does.\n";
  out += "  send call (µs, p50 / p99): the run's sink beside the plain loop's\n";
  for (const Beside& b : pairs)
    out += fmt::format("  run {} (Z{}) {:>9} / {:<9} bare {:>9} / {}\n", b.run + 1, b.ref + 1,
                       us(b.call[0]), us(b.call[1]), us(b.bare_call[0]), us(b.bare_call[1]));
  if (any_lossy)
    out +=
        "  *: frames were lost by the run or its reference (a live ring overwritten, a PUB "
        "dropping): their frames/s count only what the subscriber got.\n";
  return out;
}

json zmq_reference_json(const BenchReport& report) {
  json refs = json::array();
  for (const auto& r : report.zmq_references)
    refs.push_back({{"transport", r.transport},
                    {"pattern", r.pattern},
                    {"latency_mode", r.latency_mode},
                    {"endpoint", r.endpoint},
                    {"rate_hz", r.rate_hz},
                    {"n_out", r.n_out},
                    {"message_bytes", r.message_bytes},
                    {"publish_batch", r.publish_batch},
                    {"frames", r.frames},
                    {"warmup", r.warmup},
                    {"sent", r.sent},
                    {"send_dropped", r.send_dropped},
                    {"received", r.received},
                    {"measured", r.measured},
                    {"lost", r.lost},
                    {"delivered_fps", r.delivered_fps},
                    {"wake_hold", r.wake_hold},
                    {"cpu_wake_hold", r.cpu_wake_hold},
                    {"cpu_keeper", r.cpu_keeper},
                    {"zmq_io_wake", r.zmq_io_wake},
                    {"cpus", thread_cpus_json(r.cpus)},
                    {"one_way", latency_summary_json(r.one_way)},
                    {"send_call", latency_summary_json(r.send_call)}});
  json runs = json::array();
  for (const Beside& b : pair_runs(report))
    runs.push_back({{"run_index", b.run},
                    {"reference_index", b.ref},
                    {"end_to_end_p50_ns", b.e2e[0]},
                    {"end_to_end_p99_ns", b.e2e[1]},
                    {"hop_p50_ns", b.hop[0]},
                    {"hop_p99_ns", b.hop[1]},
                    {"bare_p50_ns", b.bare[0]},
                    {"bare_p99_ns", b.bare[1]},
                    {"end_to_end_over_bare_p50", ratio_json(b.e2e_ratio[0])},
                    {"end_to_end_over_bare_p99", ratio_json(b.e2e_ratio[1])},
                    {"hop_over_bare_p50", ratio_json(b.hop_ratio[0])},
                    {"hop_over_bare_p99", ratio_json(b.hop_ratio[1])},
                    {"send_call_p50_ns", b.call[0]},
                    {"send_call_p99_ns", b.call[1]},
                    {"bare_send_call_p50_ns", b.bare_call[0]},
                    {"bare_send_call_p99_ns", b.bare_call[1]},
                    {"delivered_fps", ratio_json(b.fps)},
                    {"bare_delivered_fps", ratio_json(b.bare_fps)},
                    {"delivered_over_bare", ratio_json(b.fps_ratio)}});
  return {{"what",
           "one-way latency of a plain ZeroMQ send loop with each run set-up's socket, options, "
           "message size, pacing, latency mode and subscriber; ratios: eitstream / bare at the "
           "same percentile (0 ns and null: not quoted, too few samples); send_call: the plain "
           "loop's send call per message, beside the run's (send_call_p50_ns …); delivered_fps, "
           "bare_delivered_fps and delivered_over_bare (eitstream ÷ bare frames/s) for runs at "
           "max only, else null"},
          {"skipped", report.zmq_reference_skipped},
          {"references", std::move(refs)},
          {"runs", std::move(runs)}};
}

}  // namespace eit::bench
