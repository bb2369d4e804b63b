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

#include "eit/bench/host_noise.hpp"
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

// The bare-ZeroMQ reference of a run set-up (zmq_reference.hpp): the same transport, socket type
// and options, message size, pacing, frame count, latency mode and subscriber as the runs it is
// compared with, but the messages come from a plain send loop — ZeroMQ's own one-way cost, the
// floor under eitstream's published→subscribed hop.
struct ZmqReference {
  std::string transport, pattern, latency_mode, endpoint;
  double rate_hz = 0;        // 0: as fast as the socket takes messages
  size_t n_out = 0;          // float32 values per image, as the runs' images
  size_t message_bytes = 0;  // topic + header + payload (× publish_batch)
  size_t publish_batch = 1;  // images per message: the runs' publish batch at max, else 1
  size_t frames = 0, warmup = 0;
  uint64_t sent = 0, send_dropped = 0, received = 0;  // whole run, warm-up included
  size_t measured = 0;        // measured-window messages with a send and a receive time
  size_t lost = 0;            // measured-window messages sent but never received
  LatencySummary one_way;     // send → receive, ns
  // The send call of the plain loop (ns; measured-window messages it sent): what the runs' own
  // send call (the sink's publish call) costs without the pipeline.
  LatencySummary send_call;
  double delivered_fps = 0;   // measured messages over first send → last receive
  bool wake_hold = false;     // the runs' RunConfig::wants_wake_hold(): the sender takes one too
  std::string zmq_io_cpu = "sink";  // the runs' RunConfig::zmq_io_cpu (own: spin mode only)
  std::string zmq_io_wake = "preempt";  // the runs' RunConfig::zmq_io_wake
  std::string cpu_wake_hold;  // the sender's CpuWakeHold, held or why not ("": not asked)
  std::string cpu_keeper;     // zmq_io_cpu "own": the I/O CPU's CpuKeeper, or why not ("": none)
  // --cpus: the sender on the runs' source CPU, the receiver on their subscriber's (else empty).
  std::vector<ThreadCpu> cpus;
};

struct BenchReport {
  MachineInfo machine;
  std::vector<RunResult> runs;
  std::optional<Comparison> comparison;
  std::vector<ZmqReference> zmq_references;
  std::string zmq_reference_skipped;  // non-empty: why there are none (--zmq-reference)
  HostNoise host_noise;  // --host-noise: the probe before the first run, or why it was skipped
};

// The reference with the run's set-up (transport, pattern, latency mode, wake hold, rate, image
// size, frames, warm-up), or nullptr.
const ZmqReference* reference_for(const BenchReport& report, const RunConfig& run) noexcept;
// The reference block: each reference, then each run's end to end and published→subscribed next
// to its reference, with ratios; "" when there is nothing to show.
std::string format_zmq_reference(const BenchReport& report);
nlohmann::json zmq_reference_json(const BenchReport& report);
// A LatencySummary as the JSON report writes every one (n, min, max, mean, percentiles).
nlohmann::json latency_summary_json(const LatencySummary& s);
// Pinned threads as JSON: [{thread, cpu, pinned, outcome}] (empty array: nothing pinned).
nlohmann::json thread_cpus_json(const std::vector<ThreadCpu>& cpus);

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
