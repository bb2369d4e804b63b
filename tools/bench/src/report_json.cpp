// JSON and CSV renderings of a BenchReport (all latencies in integer nanoseconds).
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eit/bench/bench_report.hpp"

namespace eit::bench {
namespace {

using nlohmann::json;

json summary_json(const LatencySummary& s) {
  json j{{"n", s.n}, {"min_ns", s.min_ns}, {"max_ns", s.max_ns}, {"mean_ns", s.mean_ns}};
  json ps = json::object();
  for (const auto& pv : s.percentiles) {
    ps[std::string(pv.label)] = {{"p", pv.p},
                                 {"value_ns", pv.value_ns},
                                 {"rank", pv.rank},
                                 {"samples_beyond", pv.beyond},
                                 {"samples_needed", pv.needed},
                                 {"quoted", pv.quoted}};
  }
  j["percentiles"] = std::move(ps);
  return j;
}

json interval_json(const IntervalResult& iv) {
  json j = summary_json(iv.summary);
  j["name"] = iv.name;
  j["from"] = std::string(stamp_column_name(iv.from));
  j["to"] = std::string(stamp_column_name(iv.to));
  return j;
}

json run_json(const RunResult& r) {
  const RunConfig& c = r.config;
  json cpus{{"asked", c.cpu_request.text()},
            {"threads", thread_cpus_json(c.cpus)},
            {"source_yields", c.source_yields}};
  json config{{"label", c.label()},
              {"backend", c.backend},
              {"model", c.model},
              {"n_out", c.n_out},
              {"n_meas", c.n_meas},
              {"batch", c.batch},
              {"publish_batch", c.publish_batch},
              {"transport", c.transport},
              {"endpoint", c.endpoint},
              {"rate_hz", c.rate_hz},
              {"frames", c.frames},
              {"warmup", c.warmup},
              {"policy", c.policy},
              {"stages", c.stages},
              {"layout", c.layout},
              {"latency_mode", c.latency_mode},
              {"pattern", c.pattern},
              {"wake_hold", c.wake_hold},
              {"cuda_l2", c.cuda_l2},
              {"cpu_wake_hold", c.cpu_wake_hold},
              {"zmq_io_cpu", c.zmq_io_cpu},
              {"zmq_io_wake", c.zmq_io_wake},
              {"zmq_send", c.zmq_send},
              {"cpu_keeper", c.cpu_keeper},
              {"cpu_threads", c.cpu_threads},
              {"warm_us", c.warm_us},
              {"source_poll_us", c.source_poll_us},
              {"cpus", std::move(cpus)}};
  json queues = json::object();
  for (const auto& [name, hw] : r.counters.queue_high_water)
    queues[name] = {{"high_water", hw.first}, {"capacity", hw.second}};
  json counters{{"produced", r.counters.produced},
                {"dropped", r.counters.dropped},
                {"published", r.counters.published},
                {"send_dropped", r.counters.send_dropped},
                {"non_finite", r.counters.non_finite},
                {"backend_errors", r.counters.backend_errors},
                {"met_polling", r.counters.met_polling},
                {"subscriber_received", r.counters.subscriber_received},
                {"subscriber_batches", r.counters.subscriber_batches},
                {"queue_high_water", std::move(queues)}};
  json stages = json::array();
  for (const auto& iv : r.intervals) stages.push_back(interval_json(iv));
  return {{"config", std::move(config)},
          {"counters", std::move(counters)},
          {"frames",
           {{"total", r.frames_total},
            {"warmup_excluded", r.warmup_excluded},
            {"measured", r.measured},
            {"not_published", r.not_published},
            {"not_received", r.not_received},
            {"inconsistent", r.inconsistent}}},
          {"offered_fps", r.offered_fps},
          {"delivered_fps", r.delivered_fps},
          {"window_s", r.window_s},
          {"stages", std::move(stages)},
          {"end_to_end", interval_json(r.end_to_end)},
          {"pipeline", interval_json(r.pipeline)},
          {"frame_to_image", interval_json(r.frame_to_image)},
          {"send_call", interval_json(r.send_call)},
          {"max_sum_error_ns", r.max_sum_error_ns}};
}

json machine_json(const MachineInfo& m) {
  json versions = json::object();
  for (const auto& [k, v] : m.versions) versions[k] = v;
  return {{"hostname", m.hostname},
          {"cpu_model", m.cpu_model},
          {"logical_cpus", m.logical_cpus},
          {"usable_cpus", m.usable_cpus},
          {"kernel", m.kernel},
          {"os", m.os},
          {"compiler", m.compiler},
          {"build_type", m.build_type},
          {"gpu", m.gpu},
          {"clock_resolution_ns", m.clock_resolution_ns},
          {"started_utc", m.started_utc},
          {"command_line", m.command_line},
          {"versions", std::move(versions)}};
}

std::ofstream open_or_throw(const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("{}: cannot open for writing", path));
  return out;
}

void close_or_throw(std::ofstream& out, const std::string& path) {
  out.close();
  if (!out) throw std::runtime_error(fmt::format("{}: write failed", path));
}

}  // namespace

json latency_summary_json(const LatencySummary& s) { return summary_json(s); }

json thread_cpus_json(const std::vector<ThreadCpu>& cpus) {
  json out = json::array();
  for (const auto& t : cpus)
    out.push_back(
        {{"thread", t.thread}, {"cpu", t.cpu}, {"pinned", t.pinned()}, {"outcome", t.outcome()}});
  return out;
}

json to_json(const BenchReport& report) {
  json runs = json::array();
  for (const auto& r : report.runs) runs.push_back(run_json(r));
  json j{{"format", "eitstream-bench/1"},
         {"units", "ns"},
         {"machine", machine_json(report.machine)},
         {"runs", std::move(runs)}};
  j["zmq_reference"] = zmq_reference_json(report);
  j["host_noise"] = host_noise_json(report.host_noise);
  if (report.comparison) {
    const Comparison& c = *report.comparison;
    json ext = json::array();
    for (const auto& e : c.external)
      ext.push_back({{"name", e.name},
                     {"what", e.what},
                     {"n_out", e.n_out},
                     {"n_meas", e.n_meas},
                     {"frames_per_s", e.frames_per_s},
                     {"versions", e.versions},
                     {"run_index", e.run_index},
                     {"max_run_index", e.max_run_index},
                     {"per_frame", summary_json(e.summary)}});
    j["comparison"] = {
        {"skipped", c.skipped}, {"eitstream_what", c.eitstream_what}, {"external", std::move(ext)}};
  }
  return j;
}

void write_json(const BenchReport& report, const std::string& path) {
  auto out = open_or_throw(path);
  out << to_json(report).dump(2) << '\n';
  close_or_throw(out, path);
}

namespace {
// One CSV field in double quotes, inner quotes doubled (RFC 4180).
std::string csv_quoted(std::string_view text) {
  std::string q = "\"";
  for (char c : text) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + '"';
}
}  // namespace

void write_summary_csv(const BenchReport& report, const std::string& path) {
  auto out = open_or_throw(path);
  out << "run,label,backend,n_out,n_meas,batch,transport,rate_hz,policy,interval,from,to,n,min_ns,"
         "p50_ns,p90_ns,p99_ns,p999_ns,max_ns,mean_ns,measured,not_published,not_received,"
         "offered_fps,delivered_fps,hostname,cpu_model,gpu,started_utc,command_line\n";
  // The machine and the command on every row, so a row copied elsewhere still says where it ran.
  const MachineInfo& m = report.machine;
  const std::string machine =
      fmt::format("{},{},{},{},{}", csv_quoted(m.hostname), csv_quoted(m.cpu_model),
                  csv_quoted(m.gpu), csv_quoted(m.started_utc), csv_quoted(m.command_line));
  for (size_t i = 0; i < report.runs.size(); ++i) {
    const RunResult& r = report.runs[i];
    const auto line = [&](const IntervalResult& iv) {
      const LatencySummary& s = iv.summary;
      std::string ps;
      for (const auto& pv : s.percentiles)  // unquoted percentiles stay empty
        ps += pv.quoted ? fmt::format("{},", pv.value_ns) : std::string(",");
      out << fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}{},{:.1f},{},{},{},{:.3f},{:.3f},{}\n",
          i + 1, csv_quoted(r.config.label()), r.config.backend, r.config.n_out, r.config.n_meas,
          r.config.batch, r.config.transport, r.config.rate_hz, r.config.policy, iv.name,
          stamp_column_name(iv.from), stamp_column_name(iv.to), s.n, s.min_ns, ps, s.max_ns,
          s.mean_ns, r.measured, r.not_published, r.not_received, r.offered_fps, r.delivered_fps,
          machine);
    };
    for (const auto& iv : r.intervals) line(iv);
    line(r.end_to_end);
    line(r.pipeline);
    line(r.frame_to_image);
    line(r.send_call);
  }
  close_or_throw(out, path);
}

void write_frames_csv(const std::vector<std::pair<const StampRecorder*, const RunResult*>>& runs,
                      const std::string& path) {
  auto out = open_or_throw(path);
  out << "run,seq,warmup";
  for (size_t c = 0; c < kStampColumns; ++c) out << ',' << stamp_column_name(c) << "_ns";
  out << '\n';
  for (size_t i = 0; i < runs.size(); ++i) {
    const StampRecorder& recorder = *runs[i].first;
    const RunResult& run = *runs[i].second;
    int64_t t0 = recorder.stamp(run.first_seq, 0);
    if (t0 == 0) t0 = recorder.stamp(run.first_seq, 1);
    for (uint64_t seq = run.first_seq; seq < run.first_seq + run.frames_total; ++seq) {
      out << i + 1 << ',' << seq << ',' << (seq < run.first_seq + run.warmup_excluded ? 1 : 0);
      for (size_t c = 0; c < kStampColumns; ++c) {
        const int64_t t = recorder.stamp(seq, c);
        out << ',';
        if (t != 0) out << (t - t0);
      }
      out << '\n';
    }
  }
  close_or_throw(out, path);
}

}  // namespace eit::bench
