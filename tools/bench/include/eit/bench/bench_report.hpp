#pragma once
// BenchReport: everything one `eitstream bench` invocation measured — the machine, each run's
// results, and the optional pyEIT comparison — and the writers that turn it into a terminal
// table, JSON, CSV (summary, and per-frame stamps) and a self-contained SVG (latency_svg.hpp).
// Writers run after the runs, on the calling thread; they allocate freely and throw
// std::runtime_error naming the file when it cannot be written.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "eit/bench/latency_summary.hpp"
#include "eit/bench/machine_info.hpp"
#include "eit/bench/run_result.hpp"

namespace eit::bench {

// One loop timed outside eitstream (pyEIT's solve + a pyzmq publish per frame), next to the
// eitstream run it is compared with.
struct ExternalTiming {
  std::string name;  // "pyeit-jac", "pyeit-greit"
  std::string what;  // what one sample covers, in words
  size_t n_out = 0, n_meas = 0;
  LatencySummary summary;           // per-frame time, ns
  double frames_per_s = 0;          // frames / total loop time
  std::string versions;             // "pyeit 1.2.4, pyzmq 27.3.0, numpy 2.4.6"
  size_t run_index = SIZE_MAX;      // eitstream's paced run, same matrix shape and frames (latency)
  size_t max_run_index = SIZE_MAX;  // eitstream's run at max, same shape (frames/s)
};

struct Comparison {
  std::string skipped;         // non-empty: why no comparison was made (pyeit missing, …)
  size_t run_index = 0;        // the eitstream run compared against
  std::string eitstream_what;  // the eitstream interval compared, in words
  std::vector<ExternalTiming> external;
};

struct BenchReport {
  MachineInfo machine;
  std::vector<RunResult> runs;
  std::optional<Comparison> comparison;
};

// A readable table per run (µs), with counts, rates, drops and queue high-water marks.
std::string format_table(const BenchReport& report);
// The comparison block (ratios eitstream / pyEIT), or "" when there is none.
std::string format_comparison(const BenchReport& report);

nlohmann::json to_json(const BenchReport& report);
void write_json(const BenchReport& report, const std::string& path);
// One row per run × interval (and end to end, pipeline): summary statistics in ns.
void write_summary_csv(const BenchReport& report, const std::string& path);
// One row per frame of every run: run number, seq, warm-up flag and every stamp relative to the
// run's first scheduled time (empty: never stamped).
void write_frames_csv(const std::vector<std::pair<const StampRecorder*, const RunResult*>>& runs,
                      const std::string& path);

// The eitstream figure a comparison divides by: p50/p99 of `interval` of run `run_index`.
const IntervalResult* find_interval(const RunResult& run, std::string_view name) noexcept;

}  // namespace eit::bench
