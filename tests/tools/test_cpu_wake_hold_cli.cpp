// --cpu-wake-hold on `run` and `bench`: run says what it got; bench labels and records the hold
// per run and gives its bare ZeroMQ reference the same hold; bad values name the option.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "file_text.hpp"

using eit::test::cli_temp_path;
using eit::test::contains;
using eit::test::run_eitstream;

TEST_CASE("run --cpu-wake-hold on says whether the hold was granted, and refuses a bad value") {
  const auto socket_file = cli_temp_path("eit_wake_hold", "run.ipc");
  const auto r = run_eitstream(
      fmt::format("run --cpu-wake-hold on --frames 50 --endpoint ipc://{}", socket_file.string()));
  std::filesystem::remove(socket_file);
  INFO(r.output);
  REQUIRE(r.code == 0);
  // Granted where /dev/cpu_dma_latency is writable (root, as in CI), else the reason.
  CHECK((contains(r.output, "eitstream: CPU wake-up hold: held (/dev/cpu_dma_latency 0 µs)") ||
         contains(r.output, "eitstream: CPU wake-up hold: not held: /dev/cpu_dma_latency: ")));

  const auto plain =
      run_eitstream(fmt::format("run --frames 20 --endpoint ipc://{}", socket_file.string()));
  std::filesystem::remove(socket_file);
  CHECK(plain.code == 0);
  CHECK_FALSE(contains(plain.output, "CPU wake-up hold"));  // balanced, auto: none asked

  const auto bad = run_eitstream("run --cpu-wake-hold sometimes --frames 1");
  CHECK(bad.code != 0);
  CHECK(contains(bad.output, "--cpu-wake-hold 'sometimes': expected auto, on or off"));
}

TEST_CASE("bench --cpu-wake-hold off,on: labelled runs, each paired with a reference held alike") {
  const auto dir = cli_temp_path("eit_wake_hold", "bench");
  std::filesystem::create_directories(dir);
  const auto r = run_eitstream(
      fmt::format("bench --rate 1000 --size 64x208 --transport ipc --frames 200 --warmup 20 "
                  "--quiet --zmq-reference on --cpu-wake-hold off,on --json '{}/b.json'",
                  dir.string()));
  INFO(r.output);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(eit::test::file_text(dir / "b.json"));
  REQUIRE(j["runs"].size() == 2);
  CHECK(j["runs"][0]["config"]["wake_hold"] == "off");
  CHECK(j["runs"][0]["config"]["cpu_wake_hold"] == "");
  CHECK(j["runs"][1]["config"]["wake_hold"] == "on");
  CHECK(j["runs"][1]["config"]["cpu_wake_hold"] != "");
  CHECK(contains(r.output, "cpu 64x208 b16 ipc 1000 Hz hold"));
  // Two references, one per hold, each run beside its own.
  const auto& refs = j["zmq_reference"]["references"];
  REQUIRE(refs.size() == 2);
  const auto& pairs = j["zmq_reference"]["runs"];
  REQUIRE(pairs.size() == 2);
  for (const auto& p : pairs) {
    const auto run = p["run_index"].get<size_t>(), ref = p["reference_index"].get<size_t>();
    CHECK(refs[ref]["wake_hold"].get<bool>() == (run == 1));
    CHECK((refs[ref]["cpu_wake_hold"] == "") == (run == 0));
  }
  std::filesystem::remove_all(dir);
}
