// `eitstream run --cpus`: the run says where each stage thread went and, in every latency mode,
// that its ZeroMQ publisher's I/O thread shares the sink thread's CPU (sinks/zmq_io_placement.hpp)
// or, spin mode with --zmq-io-cpu N, runs on CPU N kept out of idle (pipeline/cpu_keeper.hpp), as
// the kernel reports them; --zmq-io-cpu any leaves the I/O thread unplaced.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_run.hpp"
#include "eit/pipeline/thread_pin.hpp"

using eit::test::cli_temp_path;
using eit::test::run_eitstream;

namespace {

// The first CPU this process may use (the child inherits the same set).
int first_allowed_cpu() {
  const std::vector<int> cpus = eit::pipeline::allowed_cpus();
  return cpus.empty() ? -1 : cpus.front();
}

}  // namespace

TEST_CASE(
    "run --latency-mode spin --cpus puts the publisher's I/O thread on its sink's CPU and says "
    "so") {
  const int cpu = first_allowed_cpu();
  REQUIRE(cpu >= 0);
  const auto socket_file = cli_temp_path("eit_run_cpus", "spin.ipc");
  const std::string ipc = "ipc://" + socket_file.string();
  const auto r = run_eitstream(
      fmt::format("run --latency-mode spin --cpus {} --frames 200 --endpoint {}", cpu, ipc));
  std::filesystem::remove(socket_file);
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output.find(fmt::format("sink 0 → CPU {} pinned", cpu)) != std::string::npos);
  CHECK(r.output.find(fmt::format("zmq io (publisher) → CPU {} pinned", cpu)) != std::string::npos);
}

TEST_CASE(
    "run --latency-mode spin --cpus --zmq-io-cpu any pins the sink and leaves the I/O thread") {
  const int cpu = first_allowed_cpu();
  REQUIRE(cpu >= 0);
  const auto socket_file = cli_temp_path("eit_run_cpus", "spin_any.ipc");
  const std::string ipc = "ipc://" + socket_file.string();
  const auto r = run_eitstream(fmt::format(
      "run --latency-mode spin --cpus {} --zmq-io-cpu any --frames 200 --endpoint {}", cpu, ipc));
  std::filesystem::remove(socket_file);
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output.find(fmt::format("sink 0 → CPU {} pinned", cpu)) != std::string::npos);
  CHECK(r.output.find("zmq io") == std::string::npos);
  const auto bad = run_eitstream("run --zmq-io-cpu somewhere --frames 1");
  CHECK(bad.code != 0);
  CHECK(bad.output.find("--zmq-io-cpu") != std::string::npos);
}

TEST_CASE(
    "run --latency-mode spin --zmq-io-cpu N puts the publisher's I/O thread on CPU N, keeps that "
    "CPU out of idle and says so") {
  const std::vector<int> allowed = eit::pipeline::allowed_cpus();
  REQUIRE_FALSE(allowed.empty());
  const int stage_cpu = allowed.front(), io_cpu = allowed.back();
  const auto socket_file = cli_temp_path("eit_run_cpus", "spin_own.ipc");
  const std::string ipc = "ipc://" + socket_file.string();
  const auto r = run_eitstream(
      fmt::format("run --latency-mode spin --cpus {} --zmq-io-cpu {} --frames 200 --endpoint {}",
                  stage_cpu, io_cpu, ipc));
  std::filesystem::remove(socket_file);
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output.find(fmt::format("sink 0 → CPU {} pinned", stage_cpu)) != std::string::npos);
  CHECK(r.output.find(fmt::format("zmq io (publisher) → CPU {} pinned", io_cpu)) !=
        std::string::npos);
  CHECK(r.output.find(fmt::format("keeping CPU {} (SCHED_IDLE spinner)", io_cpu)) !=
        std::string::npos);
}

TEST_CASE(
    "run --zmq-io-cpu N is refused outside spin mode, on a stage's CPU and for a CPU it may not "
    "use, naming why") {
  const auto balanced = run_eitstream("run --zmq-io-cpu 0 --frames 1");
  CHECK(balanced.code != 0);
  CHECK(balanced.output.find("--zmq-io-cpu 0: a CPU of their own for the I/O threads needs "
                             "--latency-mode spin") != std::string::npos);
  const auto far = run_eitstream("run --latency-mode spin --zmq-io-cpu 100000 --frames 1");
  CHECK(far.code != 0);
  CHECK(far.output.find("--zmq-io-cpu 100000: not keeping CPU 100000: pinning: Invalid argument") !=
        std::string::npos);
  const auto shared = run_eitstream("run --latency-mode spin --cpus 0 --zmq-io-cpu 0 --frames 1");
  CHECK(shared.code != 0);
  CHECK(shared.output.find("--zmq-io-cpu 0: CPU 0 is also in --cpus") != std::string::npos);
  const auto negative = run_eitstream("run --latency-mode spin --zmq-io-cpu -1 --frames 1");
  CHECK(negative.code != 0);
  CHECK(negative.output.find("expected sink, any or a CPU number") != std::string::npos);
}

TEST_CASE(
    "run --cpus in balanced mode pins the stage threads and puts the I/O thread on the sink's "
    "CPU") {
  const int cpu = first_allowed_cpu();
  REQUIRE(cpu >= 0);
  const auto socket_file = cli_temp_path("eit_run_cpus", "balanced.ipc");
  const std::string ipc = "ipc://" + socket_file.string();
  const auto r = run_eitstream(fmt::format("run --cpus {} --frames 200 --endpoint {}", cpu, ipc));
  std::filesystem::remove(socket_file);
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output.find(fmt::format("source → CPU {} pinned", cpu)) != std::string::npos);
  CHECK(r.output.find(fmt::format("zmq io (publisher) → CPU {} pinned", cpu)) != std::string::npos);
}

TEST_CASE(
    "run --zmq-io-wake defer starts the placed I/O thread at SCHED_BATCH and says so, and is "
    "refused where nothing is placed") {
  const int cpu = first_allowed_cpu();
  REQUIRE(cpu >= 0);
  const auto socket_file = cli_temp_path("eit_run_cpus", "defer.ipc");
  const std::string ipc = "ipc://" + socket_file.string();
  const auto r = run_eitstream(
      fmt::format("run --cpus {} --zmq-io-wake defer --frames 200 --endpoint {}", cpu, ipc));
  std::filesystem::remove(socket_file);
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output.find(fmt::format("zmq io (publisher) → CPU {} pinned, deferring (SCHED_BATCH)",
                                  cpu)) != std::string::npos);
  const auto unplaced = run_eitstream("run --zmq-io-wake defer --frames 1");
  CHECK(unplaced.code != 0);
  CHECK(unplaced.output.find("--zmq-io-wake defer: acts on placed I/O threads only") !=
        std::string::npos);
  const auto bad = run_eitstream("run --zmq-io-wake later --frames 1");
  CHECK(bad.code != 0);
  CHECK(bad.output.find("'later': expected preempt or defer") != std::string::npos);
}

TEST_CASE(
    "run --zmq-send inline publishes from the thread that finishes each frame with the I/O "
    "thread on its CPU and refuses lossless and batches") {
  const std::vector<int> allowed = eit::pipeline::allowed_cpus();
  REQUIRE(!allowed.empty());
  // Two CPUs where there are: the reconstructor (pipelined at 50 frames/s) takes the second.
  const int source_cpu = allowed.front(), recon_cpu = allowed.size() > 1 ? allowed[1] : allowed[0];
  const auto socket_file = cli_temp_path("eit_run_cpus", "inline.ipc");
  const std::string ipc = "ipc://" + socket_file.string();
  const auto r =
      run_eitstream(fmt::format("run --cpus {},{} --zmq-send inline --frames 100 "
                                "--endpoint {}",
                                source_cpu, recon_cpu, ipc));
  std::filesystem::remove(socket_file);
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output.find("stages pipelined") != std::string::npos);
  CHECK(r.output.find(fmt::format("reconstructor → CPU {} pinned, zmq io (publisher) → CPU {} "
                                  "pinned",
                                  recon_cpu, recon_cpu)) != std::string::npos);
  CHECK(r.output.find("sink 0 →") == std::string::npos);  // no sink thread
  CHECK(r.output.find("sink zmq inline") != std::string::npos);
  CHECK(r.output.find("sink zmq: sent 100, dropped 0") != std::string::npos);

  // A --monitor publisher keeps its own lane: --zmq-send is the main publisher's.
  const auto monitor_file = cli_temp_path("eit_run_cpus", "inline-monitor.ipc");
  const auto with_monitor =
      run_eitstream(fmt::format("run --zmq-send inline --frames 20 --fps 200 --endpoint {} "
                                "--monitor ipc://{}",
                                ipc, monitor_file.string()));
  std::filesystem::remove(socket_file);
  std::filesystem::remove(monitor_file);
  INFO(with_monitor.output);
  CHECK(with_monitor.code == 0);
  CHECK(std::regex_search(with_monitor.output, std::regex(R"(sink zmq inline, sink zmq \d+/)")));

  const auto lossless = run_eitstream("run --zmq-send inline --policy lossless --frames 1");
  CHECK(lossless.code != 0);
  CHECK(lossless.output.find("--zmq-send inline: a send on the producing thread never waits, so "
                             "it takes --policy live (lossless given)") != std::string::npos);
  const auto batched = run_eitstream("run --zmq-send inline --publish-batch 4 --frames 1");
  CHECK(batched.code != 0);
  CHECK(batched.output.find("expected --publish-batch 1, got 4") != std::string::npos);
  const auto bad = run_eitstream("run --zmq-send sideways --frames 1");
  CHECK(bad.code != 0);
  CHECK(bad.output.find("sideways") != std::string::npos);
}
