// `eitstream bench` end to end: the real binary runs a short bench (a few hundred frames through
// the real pipeline, publisher and a subscriber thread / child process) and writes its reports.
// Checks structure and arithmetic only — never timing numbers.
#include <doctest/doctest.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "file_text.hpp"
#include "svg_external_checks.hpp"
#include "test_data.hpp"

namespace fs = std::filesystem;
using eit::test::file_text;

namespace {

std::vector<std::string> split(const std::string& line, char sep = ',') {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

// Runs the bench once for the whole file (the cases below inspect its outputs).
struct BenchOutputs {
  fs::path dir;
  int status = -1;
  nlohmann::json json;
  BenchOutputs() {
    dir = fs::temp_directory_path() / fmt::format("eit_bench_cli_{}", ::getpid());
    fs::create_directories(dir);
    const std::string cmd = fmt::format(
        "'{}' bench --rate 2000 --size 256x208 --transport inproc,tcp --frames 300 --warmup 50 "
        "--batch 4 --quiet --json '{}/b.json' --csv '{}/b.csv' --svg '{}/b.svg' --frames-csv "
        "'{}/f.csv' > '{}/out.txt' 2>&1",
        EITSTREAM_BIN, dir.string(), dir.string(), dir.string(), dir.string(), dir.string());
    status = std::system(cmd.c_str());
    if (status == 0) json = nlohmann::json::parse(file_text(dir / "b.json"));
  }
  ~BenchOutputs() { fs::remove_all(dir); }
};

BenchOutputs& outputs() {
  static BenchOutputs o;
  return o;
}

// Runs `eitstream bench --quiet ARGS --json DIR/b.json` with its output in DIR/out.txt; requires
// exit status 0 (the output in the failure message) and returns the parsed report. The report of
// a previous call goes first: bench refuses an existing output file.
nlohmann::json bench_json(const fs::path& dir, const std::string& args) {
  fs::remove(dir / "b.json");
  const int status =
      std::system(fmt::format("'{}' bench --quiet {} --json '{}/b.json' > '{}/out.txt' 2>&1",
                              EITSTREAM_BIN, args, dir.string(), dir.string())
                      .c_str());
  INFO(file_text(dir / "out.txt"));
  REQUIRE(status == 0);
  return nlohmann::json::parse(file_text(dir / "b.json"));
}

// Runs `eitstream bench --quiet ARGS` with its output in `out`: (exit status, output), for
// options that must be refused.
std::pair<int, std::string> bench_status(const fs::path& out, const std::string& args) {
  const int status = std::system(
      fmt::format("'{}' bench --quiet {} > '{}' 2>&1", EITSTREAM_BIN, args, out.string()).c_str());
  return {status, file_text(out)};
}

}  // namespace

TEST_CASE("a short bench exits cleanly and reports every run with every stage") {
  auto& o = outputs();
  INFO(file_text(o.dir / "out.txt"));
  REQUIRE(o.status == 0);
  const auto& j = o.json;
  CHECK(j["format"] == "eitstream-bench/1");
  CHECK(j["machine"]["command_line"].get<std::string>().find("bench --rate 2000") !=
        std::string::npos);
  CHECK(j["machine"]["logical_cpus"].get<int>() >= 1);
  CHECK_FALSE(j["machine"]["gpu"].get<std::string>().empty());
  REQUIRE(j["runs"].size() == 2);
  const std::vector<std::string> stages{"source",  "enqueue",   "queue",    "batch",
                                        "compute", "out_queue", "transport"};
  for (const auto& run : j["runs"]) {
    CHECK(run["config"]["n_out"] == 256);
    CHECK(run["config"]["n_meas"] == 208);
    CHECK(run["config"]["batch"] == 4);
    CHECK(run["frames"]["total"] == 350);
    CHECK(run["frames"]["warmup_excluded"] == 50);
    CHECK(run["counters"]["produced"] == 350);
    // Every measured-window frame is accounted for: measured, dropped, lost or inconsistent.
    const auto& f = run["frames"];
    CHECK(f["measured"].get<int>() + f["not_published"].get<int>() + f["not_received"].get<int>() +
              f["inconsistent"].get<int>() ==
          300);
    CHECK(f["measured"].get<int>() > 0);
    REQUIRE(run["stages"].size() == stages.size());
    for (size_t i = 0; i < stages.size(); ++i) {
      CHECK(run["stages"][i]["name"] == stages[i]);
      CHECK(run["stages"][i]["n"] == f["measured"]);
      // 300 samples: p99 is quoted, p99.9 must not be.
      CHECK(run["stages"][i]["percentiles"]["p99"]["quoted"] == (f["measured"].get<int>() >= 100));
      CHECK(run["stages"][i]["percentiles"]["p99.9"]["quoted"] == false);
    }
    for (const char* key : {"end_to_end", "pipeline", "frame_to_image", "send_call"})
      CHECK_MESSAGE(run.contains(key), key);
    CHECK(run["counters"]["queue_high_water"].contains("input"));
    CHECK(run["counters"]["queue_high_water"].contains("output"));
  }
  CHECK(j["runs"][0]["config"]["transport"] == "inproc");
  CHECK(j["runs"][1]["config"]["transport"] == "tcp");
  const std::string table = file_text(o.dir / "out.txt");
  CHECK(table.find("end to end") != std::string::npos);
  CHECK(table.find("scheduled→subscribed") != std::string::npos);
}

TEST_CASE("stage latencies add up to the end-to-end latency, per frame and in the report") {
  auto& o = outputs();
  REQUIRE(o.status == 0);
  const int64_t resolution = std::max<int64_t>(1, o.json["machine"]["clock_resolution_ns"]);
  for (const auto& run : o.json["runs"]) {
    CHECK(run["max_sum_error_ns"].get<int64_t>() <= resolution);
    double sum = 0;
    for (const auto& s : run["stages"]) sum += s["mean_ns"].get<double>();
    CHECK(std::abs(sum - run["end_to_end"]["mean_ns"].get<double>()) <= resolution);
  }
  // From the raw stamps: each frame's intervals, recomputed here, add up to its end to end, and
  // the report's end-to-end extremes are exactly those of the frames.
  std::ifstream csv(o.dir / "f.csv");
  std::string line;
  REQUIRE(std::getline(csv, line));
  const auto header = split(line);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  const std::vector<std::string> chain{"scheduled_ns", "received_ns",  "enqueued_ns",
                                       "dequeued_ns",  "submitted_ns", "done_ns",
                                       "published_ns", "subscribed_ns"};
  for (const auto& c : chain) REQUIRE_MESSAGE(col.count(c), c);
  std::map<int, std::vector<int64_t>> e2e_by_run;
  size_t frames = 0;
  while (std::getline(csv, line)) {
    const auto f = split(line);
    REQUIRE(f.size() == header.size());
    ++frames;
    if (f[col["warmup"]] == "1") continue;
    bool complete = true;
    for (const auto& c : chain) complete = complete && !f[col[c]].empty();
    if (!complete) continue;
    int64_t sum = 0;
    for (size_t i = 1; i < chain.size(); ++i)
      sum += std::stoll(f[col[chain[i]]]) - std::stoll(f[col[chain[i - 1]]]);
    const int64_t e2e = std::stoll(f[col["subscribed_ns"]]) - std::stoll(f[col["scheduled_ns"]]);
    CHECK(std::llabs(sum - e2e) <= resolution);
    e2e_by_run[std::stoi(f[col["run"]])].push_back(e2e);
  }
  CHECK(frames == 2 * 350);
  for (auto& [run, v] : e2e_by_run) {
    const auto& report = o.json["runs"][run - 1]["end_to_end"];
    std::sort(v.begin(), v.end());
    CHECK(static_cast<int64_t>(v.size()) <= report["n"].get<int64_t>());
    if (static_cast<int64_t>(v.size()) == report["n"].get<int64_t>()) {
      CHECK(v.front() == report["min_ns"].get<int64_t>());
      CHECK(v.back() == report["max_ns"].get<int64_t>());
    }
  }
}

TEST_CASE("the bench writes a summary CSV and an SVG that is a valid, renderable image") {
  auto& o = outputs();
  REQUIRE(o.status == 0);
  std::ifstream csv(o.dir / "b.csv");
  std::string line;
  size_t rows = 0;
  while (std::getline(csv, line)) ++rows;
  CHECK(rows == 1 + 2 * (7 + 4));

  const fs::path svg = o.dir / "b.svg";
  REQUIRE(fs::exists(svg));
  const std::string text = file_text(svg);
  CHECK(text.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(text.find("latency CDF per stage") != std::string::npos);
  CHECK(text.find("end-to-end latency over the run") != std::string::npos);
  eit::test::check_svg_parses_and_renders(svg, o.dir / "b.png", "bench SVG");
}

// The numbers of a table line after `prefix`, split on spaces ("—" kept as text).
std::vector<std::string> fields_after(const std::string& table, const std::string& prefix) {
  const size_t at = table.find(prefix);
  if (at == std::string::npos) return {};
  const size_t end = table.find('\n', at);
  std::vector<std::string> out;
  std::stringstream ss(table.substr(at + prefix.size(), end - at - prefix.size()));
  std::string item;
  while (ss >> item) out.push_back(item);
  return out;
}

TEST_CASE("the bench measures bare ZeroMQ beside each set-up and prints eitstream's ratios to it") {
  auto& o = outputs();
  REQUIRE(o.status == 0);
  const auto& z = o.json["zmq_reference"];
  CHECK(z["skipped"] == "");  // 2 × 350 messages at 2 kHz: well within auto's budget
  REQUIRE(z["references"].size() == 2);
  REQUIRE(z["runs"].size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const auto& run = o.json["runs"][i];
    const auto& ref = z["references"][i];  // measured right after run i, the first of its set-up
    CHECK(ref["transport"] == run["config"]["transport"]);
    CHECK(ref["pattern"] == "pub");
    CHECK(ref["latency_mode"] == "balanced");
    CHECK(ref["rate_hz"] == 2000.0);
    CHECK(ref["n_out"] == 256);
    CHECK(ref["message_bytes"] == std::string("eit/bench/img").size() + 112 + 256 * 4);
    CHECK(ref["frames"] == 300);
    CHECK(ref["warmup"] == 50);
    // A PUB below its high-water mark over a live connection loses nothing.
    CHECK(ref["sent"] == 350);
    CHECK(ref["send_dropped"] == 0);
    CHECK(ref["received"] == 350);
    CHECK(ref["measured"] == 300);
    CHECK(ref["lost"] == 0);
    const auto& ow = ref["one_way"];
    CHECK(ow["n"] == 300);
    const int64_t p50 = ow["percentiles"]["p50"]["value_ns"],
                  p99 = ow["percentiles"]["p99"]["value_ns"];
    CHECK(ow["min_ns"].get<int64_t>() > 0);
    CHECK(ow["min_ns"].get<int64_t>() <= p50);
    CHECK(p50 <= p99);
    CHECK(p99 <= ow["max_ns"].get<int64_t>());
    // The plain loop's send call, one per measured message, beside the run's.
    const auto& call = ref["send_call"];
    CHECK(call["n"] == 300);
    const int64_t call_p50 = call["percentiles"]["p50"]["value_ns"];
    CHECK(call["min_ns"].get<int64_t>() > 0);
    CHECK(call_p50 <= call["percentiles"]["p99"]["value_ns"].get<int64_t>());

    const auto& pair = z["runs"][i];
    CHECK(pair["bare_send_call_p50_ns"] == call_p50);
    CHECK(pair["send_call_p50_ns"] == run["send_call"]["percentiles"]["p50"]["value_ns"]);
    CHECK(pair["run_index"] == i);
    CHECK(pair["reference_index"] == i);
    CHECK(pair["bare_p50_ns"] == p50);
    CHECK(pair["end_to_end_p50_ns"] == run["end_to_end"]["percentiles"]["p50"]["value_ns"]);
    CHECK(pair["hop_p99_ns"] == run["stages"][6]["percentiles"]["p99"]["value_ns"]);
    CHECK(pair["end_to_end_over_bare_p50"].get<double>() ==
          doctest::Approx(pair["end_to_end_p50_ns"].get<double>() / static_cast<double>(p50)));

    // The table's ratios are its own printed figures divided (to their rounding).
    const std::string table = file_text(o.dir / "out.txt");
    const auto f = fields_after(table, fmt::format("  run {:<4} Z{:<3}", i + 1, i + 1));
    REQUIRE(f.size() >= 10);
    const auto num = [](const std::string& s) { return std::stod(s); };
    // bare p50 in µs, as printed to 2 decimals (a relative bound failed for 3.35 against 3.345)
    CHECK(f[4] == fmt::format("{:.2f}", static_cast<double>(p50) * 1e-3));
    CHECK(num(f[6]) == doctest::Approx(num(f[0]) / num(f[4])).epsilon(0.01));  // e2e ÷ bare
    CHECK(num(f[8]) == doctest::Approx(num(f[2]) / num(f[4])).epsilon(0.01));  // hop ÷ bare
    CHECK(num(f[9]) == doctest::Approx(num(f[3]) / num(f[5])).epsilon(0.01));  // hop p99
    const auto zrow = fields_after(table, fmt::format("  Z{:<3}", i + 1));
    REQUIRE(zrow.size() >= 8);  // transport, socket, mode, "2000 Hz", bytes, sent, received…
    CHECK(zrow[0] == run["config"]["transport"].get<std::string>());
    CHECK(zrow[5] == std::to_string(ref["message_bytes"].get<int>()));
    CHECK(zrow[6] == "350");  // sent
    CHECK(zrow[7] == "350");  // received
    const auto calls = fields_after(table, fmt::format("  run {} (Z{})", i + 1, i + 1));
    INFO(table);
    REQUIRE(calls.size() == 7);  // the run's p50 / p99, "bare", the loop's p50 / p99
    CHECK(calls[3] == "bare");
    CHECK(calls[4] == fmt::format("{:.2f}", static_cast<double>(call_p50) * 1e-3));
  }
}

TEST_CASE("--zmq-reference off leaves the reference out and says so") {
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_bench_noref_{}", ::getpid());
  fs::create_directories(dir);
  const auto j = bench_json(dir,
                            "--rate 2000 --size 64x208 --transport inproc --frames 100 --warmup 10 "
                            "--zmq-reference off");
  CHECK(j["zmq_reference"]["skipped"] == "--zmq-reference off");
  CHECK(j["zmq_reference"]["references"].empty());
  const std::string table = file_text(dir / "out.txt");
  CHECK(table.find("bare ZeroMQ reference skipped: --zmq-reference off") != std::string::npos);
  CHECK(table.find("transport floor") == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("bench rejects bad options with a message naming the option and the value") {
  const fs::path out = fs::temp_directory_path() / fmt::format("eit_bench_bad_{}.txt", ::getpid());
  const auto run = [&](const std::string& args) { return bench_status(out, args); };
  auto [s1, m1] = run("--rate fast");
  CHECK(s1 != 0);
  CHECK(m1.find("--rate 'fast'") != std::string::npos);
  auto [s2, m2] = run("--size 1024x207");
  CHECK(s2 != 0);
  CHECK(m2.find("207 measurements") != std::string::npos);
  auto [s3, m3] = run("--transport udp");
  CHECK(s3 != 0);
  CHECK(m3.find("--transport 'udp'") != std::string::npos);
  auto [s4, m4] = run("--zmq-reference maybe");
  CHECK(s4 != 0);
  CHECK(m4.find("--zmq-reference 'maybe': expected on, off or auto") != std::string::npos);
  auto [s5, m5] = run("--cuda-l2 maybe");
  CHECK(s5 != 0);
  CHECK(m5.find("--cuda-l2 'maybe': expected one of on, off") != std::string::npos);
  fs::remove(out);
}

TEST_CASE("bench checks every output path before the first run") {
  const fs::path out =
      fs::temp_directory_path() / fmt::format("eit_bench_paths_{}.txt", ::getpid());
  const std::string run =
      "--rate 2000 --size 64x208 --transport inproc --frames 100 --warmup 10 --zmq-reference off";
  const fs::path missing = fs::temp_directory_path() / fmt::format("eit_no_dir_{}", ::getpid());
  for (const std::string option : {"--json", "--csv", "--svg", "--frames-csv"}) {
    CAPTURE(option);
    const std::string path = (missing / "b.out").string();
    auto [status, message] = bench_status(out, fmt::format("{} {} '{}'", run, option, path));
    CHECK(status != 0);
    CHECK(message.find(fmt::format("{} {}: the folder {} does not exist", option, path,
                                   missing.string())) != std::string::npos);
    CHECK(message.find("end to end") == std::string::npos);  // no run was measured
  }
  const fs::path same = fs::temp_directory_path() / fmt::format("eit_bench_same_{}", ::getpid());
  auto [status, message] = bench_status(
      out, fmt::format("{} --json '{}' --csv '{}'", run, same.string(), same.string()));
  CHECK(status != 0);
  CHECK(message.find("--json and --csv both name") != std::string::npos);
  CHECK_FALSE(fs::exists(same));  // the check leaves no file behind
  fs::remove(out);
}

TEST_CASE(
    "bench refuses an existing output file before the first run and replaces it with --force") {
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_bench_exists_{}", ::getpid());
  fs::create_directories(dir);
  const fs::path out = dir / "out.txt";
  const std::string run =
      "--rate 2000 --size 64x208 --transport inproc --frames 100 --warmup 10 --zmq-reference off";
  const fs::path kept = dir / "kept.out";
  for (const std::string option : {"--json", "--csv", "--svg", "--frames-csv"}) {
    CAPTURE(option);
    { std::ofstream(kept) << "a report someone keeps\n"; }
    auto [status, message] =
        bench_status(out, fmt::format("{} {} '{}'", run, option, kept.string()));
    CHECK(status != 0);
    CHECK(message.find(fmt::format("{} {}: the file exists; give --force to replace it", option,
                                   kept.string())) != std::string::npos);
    CHECK(message.find("end to end") == std::string::npos);  // no run was measured
    CHECK(file_text(kept) == "a report someone keeps\n");
  }
  auto [status, message] =
      bench_status(out, fmt::format("{} --json '{}' --force", run, kept.string()));
  INFO(message);
  CHECK(status == 0);
  CHECK(nlohmann::json::parse(file_text(kept))["runs"].size() == 1);
  fs::remove_all(dir);
}

TEST_CASE("bench refuses an empty entry in a list option instead of running fewer set-ups") {
  const fs::path out =
      fs::temp_directory_path() / fmt::format("eit_bench_empty_{}.txt", ::getpid());
  const std::string run =
      "--size 64x208 --transport inproc --frames 50 --warmup 10 "
      "--zmq-reference off";
  auto [s1, m1] = bench_status(out, run + " --rate 50,,max");
  CHECK(s1 != 0);
  CHECK(m1.find("--rate '50,,max': an empty entry") != std::string::npos);
  CHECK(m1.find("end to end") == std::string::npos);
  auto [s2, m2] = bench_status(out, "--rate 2000 --size 64x208, --transport inproc --frames 50");
  CHECK(s2 != 0);
  CHECK(m2.find("--size '64x208,': an empty entry") != std::string::npos);
  fs::remove(out);
}

TEST_CASE("--cuda-l2 on,off runs a CPU backend once, with no l2off label") {
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_bench_l2_{}", ::getpid());
  fs::create_directories(dir);
  const auto report = bench_json(dir,
                                 "--backend cpu --cuda-l2 on,off --rate 1000 --size 64x208 "
                                 "--transport inproc --frames 50 --warmup 5 --zmq-reference off");
  REQUIRE(report["runs"].size() == 1);
  CHECK(report["runs"][0]["config"]["cuda_l2"] == true);
  CHECK(file_text(dir / "out.txt").find("l2off") == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE(
    "--cpus pins each run's threads and the bare reference's, reports them, and at max prints "
    "frames/s over bare") {
  if (::sysconf(_SC_NPROCESSORS_ONLN) < 2) {
    MESSAGE("SKIPPED: one CPU online; --cpus 0,1 names a CPU that is not there");
    return;
  }
  cpu_set_t allowed;
  REQUIRE(::sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_bench_cpus_{}", ::getpid());
  fs::create_directories(dir);
  // --zmq-io-cpu any, as unpaced runs want it: the stage threads alone, no I/O threads.
  const auto j = bench_json(dir,
                            "--rate max --size 64x208 --transport inproc,ipc --frames 2000 "
                            "--warmup 100 --cpus 0,1 --zmq-io-cpu any --zmq-reference on");
  const std::string table = file_text(dir / "out.txt");
  INFO(table);
  REQUIRE(j["runs"].size() == 2);
  REQUIRE(j["zmq_reference"]["references"].size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const auto& cpus = j["runs"][i]["config"]["cpus"];
    CHECK(cpus["asked"] == "0,1");
    // Unpaced CPU backend: pipelined, so source, subscriber, reconstructor, sink thread take
    // 0, 1, 0, 1 in turn; each pinned exactly where the process may use that CPU.
    const std::vector<std::pair<std::string, int>> want{
        {"source", 0}, {"subscriber", 1}, {"reconstructor", 0}, {"sink 0", 1}};
    REQUIRE(cpus["threads"].size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      const auto& t = cpus["threads"][k];
      CHECK(t["thread"] == want[k].first);
      CHECK(t["cpu"] == want[k].second);
      CHECK(t["pinned"] == static_cast<bool>(CPU_ISSET(want[k].second, &allowed)));
    }
    const auto& ref = j["zmq_reference"]["references"][i];
    REQUIRE(ref["cpus"].size() == 2);
    CHECK(ref["cpus"][0]["thread"] == "sender");
    CHECK(ref["cpus"][0]["cpu"] == 0);
    CHECK(ref["cpus"][1]["thread"] == "receiver");
    CHECK(ref["cpus"][1]["cpu"] == 1);
    CHECK(ref["cpus"][1]["pinned"] == static_cast<bool>(CPU_ISSET(1, &allowed)));
    const auto& pair = j["zmq_reference"]["runs"][i];
    CHECK(pair["reference_index"] == i);
    const double fps = j["runs"][i]["delivered_fps"], bare = ref["delivered_fps"];
    REQUIRE(fps > 0);
    REQUIRE(bare > 0);
    CHECK(pair["delivered_fps"].get<double>() == doctest::Approx(fps));
    CHECK(pair["delivered_over_bare"].get<double>() == doctest::Approx(fps / bare));
    const auto f = fields_after(table, fmt::format("  run {:<4} Z{:<3}", i + 1, i + 1));
    REQUIRE(f.size() >= 13);
    CHECK(std::stod(f[10]) == doctest::Approx(fps).epsilon(0.001));
    CHECK(std::stod(f[12]) == doctest::Approx(std::stod(f[10]) / std::stod(f[11])).epsilon(0.01));
  }
  CHECK(table.find("  CPUs: source → CPU 0 ") != std::string::npos);
  CHECK(table.find("       CPUs: sender → CPU 0 ") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE(
    "spin with --cpus puts both ends' ZeroMQ I/O threads on the sink's CPU (the reference's on "
    "its sender's), checked and listed, --zmq-io-cpu own on one more CPU kept out of idle, "
    "own-idle there unkept, any leaves them unplaced") {
  cpu_set_t allowed;
  REQUIRE(::sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  if (!CPU_ISSET(0, &allowed) || !CPU_ISSET(1, &allowed)) {
    MESSAGE("SKIPPED: this process may not use both CPU 0 and CPU 1");
    return;
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_bench_io_{}", ::getpid());
  fs::create_directories(dir);
  const auto bench = [&](const std::string& placement) {
    return bench_json(dir,
                      "--rate 1000 --size 64x208 --transport ipc --latency-mode spin --stages "
                      "run-to-completion --frames 300 --warmup 20 --cpus 0,1 "
                      "--zmq-reference on --zmq-io-cpu " +
                          placement);
  };
  // thread name → (cpu, pinned) of a "cpus" list
  const auto find = [](const nlohmann::json& list, const std::string& name) {
    for (const auto& t : list)
      if (t["thread"] == name) return std::make_pair(t["cpu"].get<int>(), t["pinned"].get<bool>());
    return std::make_pair(-2, false);
  };

  const auto placed = bench("sink");
  // Run to completion (the CPU backend at 1 kHz, asked so that the layout stays fixed): source 0,
  // subscriber 1, sink thread 0.
  const auto& run_cpus = placed["runs"][0]["config"]["cpus"]["threads"];
  CHECK(find(run_cpus, "sink 0").first == 0);
  CHECK(find(run_cpus, "zmq io (publisher)") == std::make_pair(0, true));
  CHECK(find(run_cpus, "zmq io (subscriber)") == std::make_pair(0, true));
  const auto& ref_cpus = placed["zmq_reference"]["references"][0]["cpus"];
  CHECK(find(ref_cpus, "zmq io (sender)") == std::make_pair(0, true));
  CHECK(find(ref_cpus, "zmq io (receiver)") == std::make_pair(0, true));

  // own: one more CPU in the list's order (round robin over 0,1: the fourth thread gets CPU 1),
  // shared by both ends' I/O threads, and the reference's on the same; no placeholder entry.
  const auto own = bench("own");
  const auto& own_cpus = own["runs"][0]["config"]["cpus"]["threads"];
  CHECK(own["runs"][0]["config"]["zmq_io_cpu"] == "own");
  CHECK(find(own_cpus, "sink 0").first == 0);
  CHECK(find(own_cpus, "zmq io").first == -2);
  CHECK(find(own_cpus, "zmq io (publisher)") == std::make_pair(1, true));
  CHECK(find(own_cpus, "zmq io (subscriber)") == std::make_pair(1, true));
  const auto& own_ref = own["zmq_reference"]["references"][0]["cpus"];
  CHECK(find(own_ref, "zmq io (sender)") == std::make_pair(1, true));
  CHECK(find(own_ref, "zmq io (receiver)") == std::make_pair(1, true));
  // own keeps that CPU out of idle with a spinner, the reference's too; own-idle does not.
  CHECK(own["runs"][0]["config"]["cpu_keeper"] == "keeping CPU 1 (SCHED_IDLE spinner)");
  CHECK(own["zmq_reference"]["references"][0]["cpu_keeper"] ==
        "keeping CPU 1 (SCHED_IDLE spinner)");
  const auto own_idle = bench("own-idle");
  CHECK(find(own_idle["runs"][0]["config"]["cpus"]["threads"], "zmq io (publisher)") ==
        std::make_pair(1, true));
  CHECK(own_idle["runs"][0]["config"]["cpu_keeper"] == "");
  CHECK(own_idle["zmq_reference"]["references"][0]["cpu_keeper"] == "");

  const auto unplaced = bench("any");
  CHECK(find(unplaced["runs"][0]["config"]["cpus"]["threads"], "zmq io (publisher)").first == -2);
  CHECK(find(unplaced["zmq_reference"]["references"][0]["cpus"], "zmq io (sender)").first == -2);
  fs::remove_all(dir);
}

TEST_CASE(
    "balanced with one CPU in --cpus puts every thread there, both ends' ZeroMQ I/O threads and "
    "the reference's included") {
  cpu_set_t allowed;
  REQUIRE(::sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  if (!CPU_ISSET(0, &allowed)) {
    MESSAGE("SKIPPED: this process may not use CPU 0");
    return;
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_bench_one_{}", ::getpid());
  fs::create_directories(dir);
  const auto report = bench_json(dir,
                                 "--rate 1000 --size 64x208 --transport ipc --latency-mode "
                                 "balanced --frames 300 --warmup 20 --cpus 0 --zmq-reference on");
  std::vector<std::string> run_threads, ref_threads;
  for (const auto& t : report["runs"][0]["config"]["cpus"]["threads"]) {
    INFO(t.dump());
    CHECK(t["cpu"] == 0);
    CHECK(t["pinned"] == true);
    run_threads.push_back(t["thread"]);
  }
  for (const auto& t : report["zmq_reference"]["references"][0]["cpus"]) {
    INFO(t.dump());
    CHECK(t["cpu"] == 0);
    CHECK(t["pinned"] == true);
    ref_threads.push_back(t["thread"]);
  }
  const auto has = [](const std::vector<std::string>& v, const char* name) {
    return std::ranges::find(v, name) != v.end();
  };
  CHECK(has(run_threads, "source"));
  CHECK(has(run_threads, "sink 0"));
  CHECK(has(run_threads, "zmq io (publisher)"));
  CHECK(has(run_threads, "zmq io (subscriber)"));
  CHECK(has(ref_threads, "zmq io (sender)"));
  CHECK(has(ref_threads, "zmq io (receiver)"));
  fs::remove_all(dir);
}

TEST_CASE(
    "--zmq-send lane,inline runs paced ZeroMQ runs twice and the inline one has no sink thread and "
    "its I/O thread beside the producer") {
  cpu_set_t allowed;
  REQUIRE(::sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  if (!CPU_ISSET(0, &allowed)) {
    MESSAGE("SKIPPED: this process may not use CPU 0");
    return;
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_bench_send_{}", ::getpid());
  fs::create_directories(dir);
  const auto report = bench_json(dir,
                                 "--rate 1000,max --size 64x208 --transport ipc,shm --frames 200 "
                                 "--warmup 20 --cpus 0 --zmq-reference off --zmq-send lane,inline");
  // (transport, rate, send): shm has no send to move, unpaced (lossless) runs keep their lane.
  std::vector<std::tuple<std::string, double, std::string>> runs;
  for (const auto& r : report["runs"])
    runs.emplace_back(r["config"]["transport"], r["config"]["rate_hz"], r["config"]["zmq_send"]);
  const std::vector<std::tuple<std::string, double, std::string>> expected = {
      {"ipc", 1000.0, "lane"},
      {"ipc", 1000.0, "inline"},
      {"ipc", 0.0, "lane"},
      {"shm", 1000.0, "lane"},
      {"shm", 0.0, "lane"}};
  CHECK(runs == expected);
  for (const auto& r : report["runs"]) {
    INFO(r["config"].dump());
    CHECK(r["counters"]["subscriber_received"].get<uint64_t>() >= 200);
    std::vector<std::string> threads;
    for (const auto& t : r["config"]["cpus"]["threads"]) threads.push_back(t["thread"]);
    const bool sink_thread = std::ranges::find(threads, "sink 0") != threads.end();
    const bool zmq_lane = r["config"]["transport"] == "ipc" && r["config"]["zmq_send"] == "lane";
    CHECK(sink_thread == zmq_lane);
    if (r["config"]["zmq_send"] == "inline") {
      CHECK(r["config"]["label"].get<std::string>().ends_with(" inline"));
      CHECK(std::ranges::find(threads, "zmq io (publisher)") != threads.end());
    }
  }
  const fs::path out = dir / "refused.txt";
  auto [s1, m1] = bench_status(out, "--frames 10 --zmq-send inline --policy lossless");
  CHECK(s1 != 0);
  CHECK(m1.find("--zmq-send inline: a send on the producing thread never waits, so it takes "
                "--policy live (lossless given)") != std::string::npos);
  auto [s2, m2] = bench_status(out, "--frames 10 --zmq-send inline --publish-batch 1,8");
  CHECK(s2 != 0);
  CHECK(m2.find("expected --publish-batch 1, got 8") != std::string::npos);
  auto [s3, m3] = bench_status(out, "--frames 10 --zmq-send thread");
  CHECK(s3 != 0);
  CHECK(m3.find("--zmq-send 'thread': expected one of lane, inline") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("the source yields while it polls only where a stage thread shares its CPU") {
  cpu_set_t allowed;
  REQUIRE(::sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  if (!CPU_ISSET(0, &allowed) || !CPU_ISSET(1, &allowed)) {
    MESSAGE("SKIPPED: this process may not use CPUs 0 and 1");
    return;
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_bench_yield_{}", ::getpid());
  fs::create_directories(dir);
  // Run to completion on CPUs 0,1: ipc has source, subscriber and the sink thread (back on the
  // source's CPU 0); shm's sink is inline, so the source has CPU 0 alone.
  const auto report = bench_json(dir,
                                 "--rate 1000 --size 64x208 --transport ipc,shm --frames 200 "
                                 "--warmup 20 --latency-mode spin --cpus 0,1 --stages "
                                 "run-to-completion --zmq-reference off");
  REQUIRE(report["runs"].size() == 2);
  CHECK(report["runs"][0]["config"]["transport"] == "ipc");
  CHECK(report["runs"][0]["config"]["cpus"]["source_yields"] == true);
  CHECK(report["runs"][1]["config"]["transport"] == "shm");
  CHECK(report["runs"][1]["config"]["cpus"]["source_yields"] == false);
  for (const auto& r : report["runs"])
    CHECK(r["counters"]["subscriber_received"].get<uint64_t>() >= 200);
  fs::remove_all(dir);
}

TEST_CASE(
    "--zmq-io-wake preempt,defer runs ipc twice with the reference placed alike, inproc once, "
    "and defer is refused where nothing is placed") {
  cpu_set_t allowed;
  REQUIRE(::sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  if (!CPU_ISSET(0, &allowed)) {
    MESSAGE("SKIPPED: this process may not use CPU 0");
    return;
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_bench_wake_{}", ::getpid());
  fs::create_directories(dir);
  const auto report = bench_json(dir,
                                 "--rate 1000 --size 64x208 --transport ipc,inproc --frames 200 "
                                 "--warmup 20 --cpus 0 --zmq-reference on --zmq-io-wake "
                                 "preempt,defer");
  std::vector<std::pair<std::string, std::string>> runs;  // (transport, wake)
  for (const auto& r : report["runs"])
    runs.emplace_back(r["config"]["transport"], r["config"]["zmq_io_wake"]);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"ipc", "preempt"}, {"ipc", "defer"}, {"inproc", "preempt"}};
  CHECK(runs == expected);
  for (const auto& r : report["runs"])
    if (r["config"]["transport"] == "ipc")
      CHECK(r["counters"]["subscriber_received"].get<uint64_t>() >= 200);
  // Each run has its own reference, placed and deferring as the run.
  std::vector<std::pair<std::string, std::string>> refs;
  for (const auto& ref : report["zmq_reference"]["references"])
    refs.emplace_back(ref["transport"], ref["zmq_io_wake"]);
  CHECK(refs == expected);

  const fs::path out = dir / "refused.txt";
  const auto refused = [&](const std::string& args) {
    return bench_status(out, "--frames 10 " + args);
  };
  auto [s1, m1] = refused("--transport ipc --zmq-io-wake defer");
  CHECK(s1 != 0);
  CHECK(m1.find("--zmq-io-wake defer: acts on placed I/O threads only") != std::string::npos);
  auto [s2, m2] = refused("--transport ipc --cpus 0 --zmq-io-cpu any --zmq-io-wake defer");
  CHECK(s2 != 0);
  CHECK(m2.find("--zmq-io-wake defer: acts on placed I/O threads only") != std::string::npos);
  auto [s3, m3] = refused("--zmq-io-wake soon");
  CHECK(s3 != 0);
  CHECK(m3.find("--zmq-io-wake 'soon': expected one of preempt, defer") != std::string::npos);
  // own places the I/O threads on a CPU kept busy: spin mode only, as run says.
  auto [s4, m4] = refused("--transport ipc --cpus 0,1 --zmq-io-cpu own");
  CHECK(s4 != 0);
  CHECK(m4.find("--zmq-io-cpu own: a CPU of their own for the I/O threads is for "
                "--latency-mode spin only (balanced given)") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("--cpus is checked like run's, and auto refuses too few CPUs with a clear message") {
  const fs::path out = fs::temp_directory_path() / fmt::format("eit_bench_cpus_{}.txt", ::getpid());
  const auto run = [&](const std::string& prefix, const std::string& args) {
    const int status = std::system(fmt::format("{}'{}' bench --quiet --frames 10 {} > '{}' 2>&1",
                                               prefix, EITSTREAM_BIN, args, out.string())
                                       .c_str());
    return std::make_pair(status, file_text(out));
  };
  auto [s1, m1] = run("", "--cpus 0,x");
  CHECK(s1 != 0);
  CHECK(m1.find("--cpus '0,x': 'x' is not a CPU number in 0..") != std::string::npos);
  auto [s2, m2] = run("", "--cpus 100000");
  CHECK(s2 != 0);
  CHECK(m2.find("--cpus '100000': '100000' is not a CPU number") != std::string::npos);
  if (std::system("taskset -c 0 true > /dev/null 2>&1") == 0) {
    auto [s3, m3] = run("taskset -c 0 ", "--cpus auto");
    CHECK(s3 != 0);
    CHECK(m3.find("--cpus auto: this run has 2 threads to pin (source, subscriber) but the "
                  "process may run on 1 CPU(s) (0)") != std::string::npos);
  } else {
    MESSAGE("SKIPPED (auto refusal): taskset cannot restrict this process to CPU 0");
  }
  fs::remove(out);
}

TEST_CASE(
    "--source-poll-us is recorded per run, labels a run that is not at the default and is "
    "checked") {
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_bench_poll_{}", ::getpid());
  fs::create_directories(dir);
  const std::string base =
      "--backend cpu --rate 1000 --size 64x208 --transport inproc --frames 50 --warmup 5 "
      "--zmq-reference off";
  const auto polled = bench_json(dir, base);
  REQUIRE(polled["runs"].size() == 1);
  CHECK(polled["runs"][0]["config"]["source_poll_us"] == 50);
  CHECK(polled["runs"][0]["config"]["label"].get<std::string>().find("poll") == std::string::npos);

  const auto slept = bench_json(dir, base + " --source-poll-us 0");
  CHECK(slept["runs"][0]["config"]["source_poll_us"] == 0);
  CHECK(slept["runs"][0]["config"]["label"].get<std::string>().ends_with(" poll0"));

  // Spin mode polls the whole wait whatever the option says: no label.
  const auto spun = bench_json(dir, base + " --source-poll-us 0 --latency-mode spin");
  CHECK(spun["runs"][0]["config"]["label"].get<std::string>().find("poll") == std::string::npos);

  const auto [status, message] = bench_status(dir / "bad.txt", base + " --source-poll-us 2000000");
  CHECK(status != 0);
  CHECK(message.find("--source-poll-us") != std::string::npos);
  fs::remove_all(dir);
}
