// eit_bench at library level: percentiles, stamp analysis (intervals telescope to end to end),
// and the report writers (JSON keys, CSV rows, SVG well-formed and renderable).
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eit/bench/bench_report.hpp"
#include "eit/bench/latency_summary.hpp"
#include "eit/bench/latency_svg.hpp"
#include "eit/bench/run_result.hpp"
#include "eit/bench/stamp_recorder.hpp"
#include "eit/bench/zmq_reference.hpp"
#include "file_text.hpp"
#include "svg_external_checks.hpp"
#include "test_data.hpp"

namespace fs = std::filesystem;
using eit::bench::kStampColumns;
using eit::pipeline::kStageCount;
using eit::test::file_text;

namespace {

fs::path temp_dir(const char* name) {
  fs::path d = fs::temp_directory_path() / fmt::format("eit_bench_{}_{}", name, ::getpid());
  fs::create_directories(d);
  return d;
}

// A recorder filled with frames whose stamps advance by random positive steps, starting on a
// 1 kHz schedule; `skip_publish` / `skip_subscriber` seqs lack those stamps.
eit::bench::StampRecorder synthetic_run(size_t n, uint64_t first_seq, std::mt19937_64& rng,
                                        uint64_t skip_publish, uint64_t skip_subscriber) {
  eit::bench::StampRecorder rec(n, first_seq);
  std::uniform_int_distribution<int64_t> step(0, 20'000);
  for (uint64_t seq = first_seq; seq < first_seq + n; ++seq) {
    std::array<int64_t, kStageCount> t{};
    t[0] = 1'000'000'000 + static_cast<int64_t>(seq - first_seq) * 1'000'000;
    for (size_t c = 1; c < kStageCount; ++c) t[c] = t[c - 1] + step(rng);
    const int64_t sent = t[kStageCount - 1] + step(rng);
    if (seq == skip_publish) t[kStageCount - 1] = 0;
    rec.record(seq, t, seq == skip_publish ? 0 : sent);
    if (seq != skip_subscriber && seq != skip_publish)
      rec.record_subscriber(seq, sent + step(rng) + 1);
  }
  return rec;
}

eit::bench::RunConfig config_for(size_t frames, size_t warmup) {
  eit::bench::RunConfig c;
  c.backend = "cpu";
  c.model = "synthetic stamps";
  c.n_out = 1024;
  c.n_meas = 208;
  c.transport = "inproc";
  c.rate_hz = 1000;
  c.frames = frames;
  c.warmup = warmup;
  c.policy = "lossless";
  return c;
}

// A bare ZeroMQ reference with config_for(1000, 200)'s set-up (lossless → PUSH, inproc,
// balanced, 1024 pixels) at `rate_hz` (0: max); its times are the caller's.
eit::bench::ZmqReference inproc_reference(double rate_hz) {
  eit::bench::ZmqReference ref;
  ref.transport = "inproc";
  ref.pattern = "push";
  ref.latency_mode = "balanced";
  ref.rate_hz = rate_hz;
  ref.n_out = 1024;
  ref.frames = 1000;
  ref.warmup = 200;
  return ref;
}

}  // namespace

TEST_CASE("nearest-rank percentiles pick observed samples and refuse tails they cannot see") {
  std::vector<int64_t> v(1000);
  std::iota(v.begin(), v.end(), 1);
  std::shuffle(v.begin(), v.end(), std::mt19937_64(7));
  const auto s = eit::bench::summarize(v);
  CHECK(s.n == 1000);
  CHECK(s.min_ns == 1);
  CHECK(s.max_ns == 1000);
  CHECK(s.mean_ns == doctest::Approx(500.5));
  CHECK(s.find("p50")->value_ns == 500);
  CHECK(s.find("p90")->value_ns == 900);
  CHECK(s.find("p99")->value_ns == 990);
  CHECK(s.find("p99")->beyond == 10);
  CHECK(s.find("p99.9")->value_ns == 999);
  CHECK(s.find("p99.9")->beyond == 1);
  CHECK(s.find("p99.9")->quoted);

  std::vector<int64_t> w(v.begin(), v.begin() + 999);
  const auto t = eit::bench::summarize(w);
  CHECK(t.find("p99")->quoted);
  CHECK_FALSE(t.find("p99.9")->quoted);
  CHECK(t.find("p99.9")->needed == 1000);

  std::vector<int64_t> few{5, 3};
  const auto u = eit::bench::summarize(few);
  CHECK(u.find("p50")->quoted);
  CHECK(u.find("p50")->value_ns == 3);
  CHECK_FALSE(u.find("p90")->quoted);

  std::vector<int64_t> none;
  CHECK(eit::bench::summarize(none).n == 0);
}

TEST_CASE("stamp recorder counts frames outside its preallocated range instead of writing them") {
  eit::bench::StampRecorder rec(4, 10);
  std::array<int64_t, kStageCount> t{};
  t.fill(5);
  CHECK(rec.record(10, t, 6));
  CHECK(rec.record(13, t, 6));
  CHECK_FALSE(rec.record(14, t, 6));
  CHECK_FALSE(rec.record(9, t, 6));
  CHECK_FALSE(rec.record_subscriber(99, 1));
  CHECK(rec.record(13, t, 6));
  CHECK(rec.stamp(13, eit::bench::kSentColumn) == 6);
  CHECK(rec.out_of_range() == 2);
  CHECK(rec.subscriber_out_of_range() == 1);
  CHECK(rec.duplicates() == 1);
  CHECK(rec.has_row(10));
  CHECK_FALSE(rec.has_row(11));
  CHECK(rec.stamp(13, eit::bench::kSubscriberColumn) == 0);
}

TEST_CASE("stage intervals add up exactly to each frame's end-to-end latency") {
  std::mt19937_64 rng(42);
  const size_t warmup = 50, frames = 450;
  const uint64_t first = 3;
  auto rec = synthetic_run(warmup + frames, first, rng, first + 100, first + 200);
  const auto run = eit::bench::analyze_run(rec, first, config_for(frames, warmup), {});
  CHECK(run.warmup_excluded == warmup);
  CHECK(run.not_published == 1);
  CHECK(run.not_received == 1);
  CHECK(run.measured == frames - 2);
  CHECK(run.inconsistent == 0);
  CHECK(run.max_sum_error_ns == 0);
  REQUIRE(run.intervals.size() == eit::bench::kChainIntervals);
  CHECK(run.intervals.front().from == 0);
  CHECK(run.intervals.back().to == eit::bench::kSubscriberColumn);
  double sum_means = 0;
  for (size_t i = 0; i < run.intervals.size(); ++i) {
    if (i > 0) CHECK(run.intervals[i].from == run.intervals[i - 1].to);
    CHECK(run.intervals[i].summary.n == run.measured);
    sum_means += run.intervals[i].summary.mean_ns;
  }
  CHECK(sum_means == doctest::Approx(run.end_to_end.summary.mean_ns).epsilon(1e-12));
  // Recompute end to end independently from the recorder: same multiset of values.
  std::vector<int64_t> e2e;
  for (uint64_t seq = first + warmup; seq < first + warmup + frames; ++seq) {
    const int64_t sub = rec.stamp(seq, eit::bench::kSubscriberColumn);
    if (sub != 0 && rec.has_row(seq)) e2e.push_back(sub - rec.stamp(seq, 0));
  }
  std::sort(e2e.begin(), e2e.end());
  CHECK(e2e == run.end_to_end.sorted_ns);
  CHECK(run.offered_fps == doctest::Approx(1000.0).epsilon(1e-6));
}

TEST_CASE("frames whose stamps go backwards are counted, not measured") {
  std::mt19937_64 rng(1);
  auto rec = synthetic_run(120, 0, rng, 999, 999);
  std::array<int64_t, kStageCount> t{};
  for (size_t c = 0; c < kStageCount; ++c) t[c] = rec.stamp(30, c);
  std::swap(t[2], t[4]);
  if (t[2] == t[4]) t[2] += 1;
  rec.record(30, t, rec.stamp(30, eit::bench::kSentColumn));
  const auto run = eit::bench::analyze_run(rec, 0, config_for(100, 20), {});
  CHECK(run.inconsistent == 1);
  CHECK(run.measured == 99);
}

TEST_CASE("report writes JSON with every stage, CSV rows per interval, and a valid SVG") {
  std::mt19937_64 rng(3);
  auto rec = synthetic_run(1200, 0, rng, 999'999, 999'999);
  eit::bench::BenchReport report;
  const char* argv[] = {"eitstream", "bench", "--frames", "1000", "--svg", "a b.svg"};
  report.machine = eit::bench::collect_machine_info(6, argv);
  eit::bench::PipelineCounters counters;
  counters.queue_high_water = {{"input", {3, 64}}, {"output", {1, 64}}};
  report.runs.push_back(eit::bench::analyze_run(rec, 0, config_for(1000, 200), counters));
  CHECK(report.machine.command_line == "eitstream bench --frames 1000 --svg 'a b.svg'");
  CHECK(report.machine.logical_cpus > 0);

  const auto dir = temp_dir("report");
  eit::bench::write_json(report, (dir / "r.json").string());
  const auto j = nlohmann::json::parse(file_text(dir / "r.json"));
  CHECK(j["format"] == "eitstream-bench/1");
  for (const char* key : {"cpu_model", "kernel", "gpu", "command_line", "clock_resolution_ns"})
    CHECK_MESSAGE(j["machine"].contains(key), key);
  const auto& run = j["runs"][0];
  const std::vector<std::string> names{"source",  "enqueue",   "queue",    "batch",
                                       "compute", "out_queue", "transport"};
  REQUIRE(run["stages"].size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    CHECK(run["stages"][i]["name"] == names[i]);
    CHECK(run["stages"][i]["percentiles"]["p99.9"]["quoted"] == true);
  }
  CHECK(run["end_to_end"]["from"] == "scheduled");
  CHECK(run["end_to_end"]["to"] == "subscribed");
  CHECK(run["send_call"]["from"] == "published");
  CHECK(run["send_call"]["to"] == "sent");
  CHECK(run["frames"]["measured"] == 1000);
  CHECK(run["counters"]["queue_high_water"]["input"]["high_water"] == 3);

  eit::bench::write_summary_csv(report, (dir / "r.csv").string());
  std::ifstream csv(dir / "r.csv");
  std::string line;
  size_t rows = 0;
  while (std::getline(csv, line)) ++rows;
  CHECK(rows == 1 + eit::bench::kChainIntervals + 4);
  // Every row says where and how it was measured; a quote in the command line is doubled.
  const std::string command_line =
      std::exchange(report.machine.command_line, R"(eitstream bench --label "x")");
  eit::bench::write_summary_csv(report, (dir / "r.csv").string());
  report.machine.command_line = command_line;
  std::ifstream quoted(dir / "r.csv");
  std::getline(quoted, line);
  CHECK(line.ends_with(",hostname,cpu_model,gpu,started_utc,command_line"));
  std::getline(quoted, line);
  CHECK(line.ends_with(R"(,"eitstream bench --label ""x""")"));
  CHECK(line.find(fmt::format(R"("{}")", report.machine.hostname)) != std::string::npos);

  eit::bench::write_frames_csv({{&rec, &report.runs[0]}}, (dir / "f.csv").string());
  std::ifstream frames(dir / "f.csv");
  rows = 0;
  while (std::getline(frames, line)) ++rows;
  CHECK(rows == 1 + 1200);

  const auto svg_path = dir / "r.svg";
  eit::bench::write_latency_svg(report, svg_path.string());
  const std::string svg = file_text(svg_path);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(svg.find("&apos;a b.svg&apos;") != std::string::npos);  // escaped command line
  eit::test::check_svg_parses_and_renders(svg_path, dir / "r.png", "SVG");
  fs::remove_all(dir);
}

TEST_CASE("durations are labelled in the unit that reads best") {
  CHECK(eit::bench::format_duration(850) == "850 ns");
  CHECK(eit::bench::format_duration(12'340) == "12.34 µs");
  CHECK(eit::bench::format_duration(3'200'000) == "3.2 ms");
  CHECK(eit::bench::format_duration(1.5e9) == "1.5 s");
}

TEST_CASE(
    "a bare ZeroMQ reference pairs only with runs of its set-up, as ratios of their figures") {
  std::mt19937_64 rng(5);
  auto rec = synthetic_run(1200, 0, rng, 999'999, 999'999);
  eit::bench::BenchReport report;
  eit::bench::PipelineCounters counters;
  report.runs.push_back(eit::bench::analyze_run(rec, 0, config_for(1000, 200), counters));
  auto spin = config_for(1000, 200);
  spin.latency_mode = "spin";
  report.runs.push_back(eit::bench::analyze_run(rec, 0, spin, counters));

  auto ref = inproc_reference(1000);  // run 1's set-up: lossless → PUSH, inproc, 1 kHz, balanced
  std::vector<int64_t> one_way(1000);
  std::iota(one_way.begin(), one_way.end(), int64_t{3'000});
  ref.one_way = eit::bench::summarize(one_way);
  ref.measured = 1000;
  std::vector<int64_t> calls(1000, 2'000);
  calls.back() = 9'000;
  ref.send_call = eit::bench::summarize(calls);
  auto other = ref;  // spin like run 2, but a smaller image: no run has its set-up
  other.latency_mode = "spin";
  other.n_out = 512;
  report.zmq_references = {ref, other};

  CHECK(eit::bench::reference_for(report, report.runs[0].config) == &report.zmq_references[0]);
  CHECK(eit::bench::reference_for(report, report.runs[1].config) == nullptr);
  // The I/O threads' placement is part of the set-up in every mode (with --cpus, sink places
  // them in balanced mode too).
  auto same_but_own = other;
  same_but_own.n_out = spin.n_out;
  same_but_own.wake_hold = spin.wants_wake_hold();
  same_but_own.zmq_io_cpu = "own";
  CHECK_FALSE(eit::bench::same_setup(same_but_own, spin));
  same_but_own.zmq_io_cpu = "sink";
  CHECK(eit::bench::same_setup(same_but_own, spin));
  auto balanced_own = ref;
  balanced_own.zmq_io_cpu = "own";
  CHECK_FALSE(eit::bench::same_setup(balanced_own, report.runs[0].config));
  balanced_own.zmq_io_cpu = report.runs[0].config.zmq_io_cpu;
  CHECK(eit::bench::same_setup(balanced_own, report.runs[0].config));
  const auto j = eit::bench::to_json(report)["zmq_reference"];
  CHECK(j["skipped"] == "");
  REQUIRE(j["references"].size() == 2);
  CHECK(j["references"][1]["n_out"] == 512);
  REQUIRE(j["runs"].size() == 1);
  const auto& pair = j["runs"][0];
  CHECK(pair["run_index"] == 0);
  CHECK(pair["reference_index"] == 0);
  const auto& e2e = report.runs[0].end_to_end.summary;
  const auto& hop = report.runs[0].intervals.back();
  REQUIRE(hop.name == "transport");
  CHECK(pair["bare_p50_ns"] == 3'499);  // nearest rank 500 of 3000…3999
  CHECK(pair["bare_p99_ns"] == 3'989);
  CHECK(pair["bare_send_call_p50_ns"] == 2'000);
  CHECK(j["references"][0]["send_call"]["max_ns"] == 9'000);
  CHECK(pair["send_call_p50_ns"] == report.runs[0].send_call.summary.find("p50")->value_ns);
  CHECK(pair["end_to_end_p50_ns"] == e2e.find("p50")->value_ns);
  CHECK(pair["hop_p99_ns"] == hop.summary.find("p99")->value_ns);
  CHECK(pair["end_to_end_over_bare_p50"].get<double>() ==
        doctest::Approx(static_cast<double>(e2e.find("p50")->value_ns) / 3'499.0));
  CHECK(pair["hop_over_bare_p99"].get<double>() ==
        doctest::Approx(static_cast<double>(hop.summary.find("p99")->value_ns) / 3'989.0));

  const std::string table = eit::bench::format_table(report);
  CHECK(table.find("bare ZeroMQ, transport floor") != std::string::npos);
  CHECK(table.find("  Z2 ") != std::string::npos);
  CHECK(table.find("  run 1    Z1 ") != std::string::npos);
  CHECK(table.find("  run 2 ") == std::string::npos);

  report.zmq_references.clear();
  report.zmq_reference_skipped = "--zmq-reference off";
  CHECK(eit::bench::format_table(report).find(
            "bare ZeroMQ reference skipped: --zmq-reference off") != std::string::npos);
  CHECK(eit::bench::to_json(report)["zmq_reference"]["runs"].empty());
}

TEST_CASE(
    "at max the reports give eitstream's delivered frames/s over the bare reference's, and each "
    "thread's CPU") {
  std::mt19937_64 rng(9);
  auto rec = synthetic_run(1200, 0, rng, 999'999, 999'999);
  eit::bench::BenchReport report;
  eit::bench::PipelineCounters counters;
  auto at_max = config_for(1000, 200);
  at_max.rate_hz = 0;
  at_max.cpu_request.list = {2, 3};
  at_max.cpus = {{"source", 2, 0}, {"subscriber", 3, EINVAL}};
  report.runs.push_back(eit::bench::analyze_run(rec, 0, at_max, counters));
  report.runs.push_back(eit::bench::analyze_run(rec, 0, config_for(1000, 200), counters));
  REQUIRE(report.runs[0].delivered_fps > 0);

  auto ref = inproc_reference(0);
  std::vector<int64_t> one_way(1000, 5'000);
  ref.one_way = eit::bench::summarize(one_way);
  ref.measured = 1000;
  ref.delivered_fps = 250'000;
  ref.cpus = {{"sender", 2, 0}, {"receiver", 3, 0}};
  auto paced = ref;  // run 2's set-up: 1 kHz, nothing pinned
  paced.rate_hz = 1000;
  paced.delivered_fps = 1000;
  paced.cpus.clear();
  report.zmq_references = {ref, paced};
  // A reference pinned elsewhere is not this run's.
  auto elsewhere = ref;
  elsewhere.cpus[1].cpu = 4;
  CHECK_FALSE(eit::bench::same_setup(elsewhere, report.runs[0].config));
  CHECK(eit::bench::same_setup(ref, report.runs[0].config));

  const auto j = eit::bench::to_json(report);
  const auto& pairs = j["zmq_reference"]["runs"];
  REQUIRE(pairs.size() == 2);
  const double fps = report.runs[0].delivered_fps;
  CHECK(pairs[0]["delivered_fps"].get<double>() == doctest::Approx(fps));
  CHECK(pairs[0]["bare_delivered_fps"].get<double>() == 250'000);
  CHECK(pairs[0]["delivered_over_bare"].get<double>() == doctest::Approx(fps / 250'000));
  CHECK(pairs[1]["delivered_over_bare"].is_null());  // paced: it delivers its schedule
  CHECK(j["zmq_reference"]["references"][0]["delivered_fps"] == 250'000);
  CHECK(j["zmq_reference"]["references"][0]["cpus"][1]["thread"] == "receiver");
  const auto& cpus = j["runs"][0]["config"]["cpus"];
  CHECK(cpus["asked"] == "2,3");
  REQUIRE(cpus["threads"].size() == 2);
  CHECK(cpus["threads"][0] ==
        nlohmann::json{{"thread", "source"}, {"cpu", 2}, {"pinned", true}, {"outcome", "pinned"}});
  CHECK(cpus["threads"][1]["pinned"] == false);
  CHECK(j["runs"][1]["config"]["cpus"]["asked"] == "");
  CHECK(j["runs"][1]["config"]["cpus"]["threads"].empty());

  const std::string table = eit::bench::format_table(report);
  CHECK(table.find("  CPUs: source → CPU 2 pinned, subscriber → CPU 3 not pinned: Invalid "
                   "argument\n") != std::string::npos);
  CHECK(table.find("  CPUs: threads not pinned (no --cpus)\n") != std::string::npos);
  CHECK(table.find("       CPUs: sender → CPU 2 pinned, receiver → CPU 3 pinned\n") !=
        std::string::npos);
  const auto row = [&](const std::string& prefix) {
    const size_t at = table.find(prefix);
    REQUIRE(at != std::string::npos);
    std::stringstream ss(table.substr(at + prefix.size(), table.find('\n', at) - at));
    std::vector<std::string> f;
    for (std::string item; ss >> item;) f.push_back(item);
    return f;
  };
  const auto z1 = row("  Z1   ");
  REQUIRE(z1.size() == 14);
  CHECK(z1[13] == "250000");  // frames/s, after max
  const auto r1 = row("  run 1    Z1   ");
  REQUIRE(r1.size() >= 13);
  CHECK(r1[10] == fmt::format("{:.0f}", fps));
  CHECK(r1[11] == "250000");
  CHECK(std::stod(r1[12]) == doctest::Approx(fps / 250'000).epsilon(0.01));
  const auto r2 = row("  run 2    Z2   ");
  CHECK(r2[10] == "—");
  CHECK(r2[12] == "—");
  CHECK(table.find("*: frames were lost") == std::string::npos);

  report.zmq_references[0].lost = 5;  // a live ring overwritten under its reader
  const std::string lossy = eit::bench::format_table(report);
  CHECK(lossy.find(fmt::format("{:.2f}*", fps / 250'000)) != std::string::npos);
  CHECK(lossy.find("*: frames were lost by the run or its reference") != std::string::npos);
}
