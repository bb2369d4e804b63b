// `eitstream run --cpus`: the run says where each stage thread went and, in spin mode, that its
// ZeroMQ publisher's I/O thread shares the sink thread's CPU (sinks/zmq_io_placement.hpp), as the
// kernel reports them; other modes leave the I/O thread unplaced.
#include <doctest/doctest.h>

#include <filesystem>
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

TEST_CASE("run --cpus in balanced mode pins the stage threads and leaves the I/O thread alone") {
  const int cpu = first_allowed_cpu();
  REQUIRE(cpu >= 0);
  const auto socket_file = cli_temp_path("eit_run_cpus", "balanced.ipc");
  const std::string ipc = "ipc://" + socket_file.string();
  const auto r = run_eitstream(fmt::format("run --cpus {} --frames 200 --endpoint {}", cpu, ipc));
  std::filesystem::remove(socket_file);
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output.find(fmt::format("source → CPU {} pinned", cpu)) != std::string::npos);
  CHECK(r.output.find("zmq io") == std::string::npos);
}
