#include "bench_reference.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "command_registry.hpp"
#include "eit/bench/zmq_reference.hpp"

namespace eit::cli {

ReferencePlan::ReferencePlan(const std::string& choice, const std::vector<Planned>& plan,
                             eit::bench::BenchReport& report) {
  if (choice != "on" && choice != "off" && choice != "auto")
    throw CommandError(fmt::format("--zmq-reference '{}': expected on, off or auto", choice));
  if (choice == "off") {
    report.zmq_reference_skipped = "--zmq-reference off";
    return;
  }
  // The distinct set-ups of the grid (the pyEIT comparison's runs get none) and their cost.
  std::vector<eit::bench::RunConfig> setups;
  double seconds = 0;
  for (const auto& p : plan) {
    if (p.comparison) continue;
    bool seen = false;
    for (const auto& s : setups)
      seen = seen || (s.transport == p.config.transport && s.policy == p.config.policy &&
                      s.latency_mode == p.config.latency_mode &&
                      s.wants_wake_hold() == p.config.wants_wake_hold() &&
                      s.rate_hz == p.config.rate_hz && s.n_out == p.config.n_out &&
                      eit::bench::reference_batch(s) == eit::bench::reference_batch(p.config));
    if (seen) continue;
    setups.push_back(p.config);
    seconds += eit::bench::estimated_reference_seconds(p.config);
  }
  enabled_ = choice == "on" || seconds <= kAutoBudgetSeconds;
  if (!enabled_)
    report.zmq_reference_skipped = fmt::format(
        "--zmq-reference auto: its {} run(s) would add about {:.0f} s (auto runs them up to "
        "{:.0f} s); --zmq-reference on runs them",
        setups.size(), seconds, kAutoBudgetSeconds);
}

void ReferencePlan::after_run(const eit::bench::RunConfig& run, const std::string& executable,
                              bool quiet, eit::bench::BenchReport& report) const {
  if (!enabled_ || eit::bench::reference_for(report, run)) return;
  report.zmq_references.push_back(eit::bench::run_zmq_reference(run, executable));
  if (quiet) return;
  const auto& r = report.zmq_references.back();
  const auto* p99 = r.one_way.find("p99");
  fmt::print(stderr, "bare ZeroMQ Z{} ({} {} {}): {} messages, one-way p50 {:.1f} µs, p99 {}\n",
             report.zmq_references.size(), r.transport, r.pattern, r.latency_mode, r.measured,
             r.one_way.percentiles[0].value_ns * 1e-3,
             p99 && p99->quoted ? fmt::format("{:.1f} µs", p99->value_ns * 1e-3) : "—");
}

}  // namespace eit::cli
