// --publish-batch on `run` and `bench`: run announces it and `listen` reads the batch messages
// back image by image; bench makes it an axis of its grid and gives each run at max a bare
// ZeroMQ reference sending batches of the same size.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "file_text.hpp"
#include "subprocess.hpp"

using eit::test::cli_temp_path;
using eit::test::contains;
using eit::test::run_eitstream;
using eit::test::Subprocess;
using namespace std::chrono_literals;

TEST_CASE("run --publish-batch 32: listen gets every image of a lossless run, in order") {
  // The consumer connects after the run has started: the frames queue up behind the PUSH socket,
  // so the publisher finds several waiting and sends batches.
  Subprocess run({EITSTREAM_BIN, "run", "--push", "--policy", "lossless", "--fps", "0", "--frames",
                  "3000", "--publish-batch", "32", "--endpoint", "tcp://127.0.0.1:*", "--quiet"});
  REQUIRE(run.wait_for_stderr("PUSH lossless on tcp://", 120s));
  std::smatch m;
  const std::string err = run.err();
  REQUIRE(std::regex_search(err, m, std::regex(R"(on (tcp://127\.0\.0\.1:\d+))")));
  Subprocess listen({EITSTREAM_BIN, "listen", m[1].str(), "--pull", "--summary", "--exit-on-end",
                     "--timeout", "60"});
  REQUIRE(listen.wait(90s) == 0);
  REQUIRE(run.wait(60s) == 0);
  // Printed after the endpoint line: complete once the run has ended.
  CHECK(contains(run.err(),
                 "publish batch 32: images waiting for the publisher leave together on "
                 "topic eit/default/imgs"));
  INFO(listen.out());
  CHECK(contains(listen.out(),
                 "images 3000, missing by seq 0, reported dropped 0, out of order 0, "
                 "malformed 0"));
  CHECK(contains(listen.out(), ", batch messages "));
  CHECK(contains(listen.out(), "series ended"));
}

TEST_CASE("run --publish-batch refuses 0 and more than 4096") {
  for (const char* bad : {"0", "5000"}) {
    const auto r = run_eitstream(fmt::format("run --publish-batch {} --frames 1", bad));
    CHECK(r.code != 0);
    CHECK(contains(r.output, "--publish-batch"));
  }
}

TEST_CASE(
    "bench --publish-batch 1,16 at max: labelled runs, each beside a reference of its batch") {
  const auto dir = cli_temp_path("eit_publish_batch", "bench");
  std::filesystem::create_directories(dir);
  const auto r = run_eitstream(
      fmt::format("bench --rate max --size 64x208 --transport ipc --frames 3000 --warmup 100 "
                  "--quiet --zmq-reference on --publish-batch 1,16 --json '{}/b.json'",
                  dir.string()));
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "cpu 64x208 b16 ipc max pb16"));
  const auto j = nlohmann::json::parse(eit::test::file_text(dir / "b.json"));
  REQUIRE(j["runs"].size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const auto& run = j["runs"][i];
    CHECK(run["config"]["publish_batch"] == (i == 0 ? 1 : 16));
    CHECK(run["counters"]["subscriber_received"] == 3100);  // lossless: every image arrived
  }
  CHECK(j["runs"][0]["counters"]["subscriber_batches"] == 0);
  const auto& refs = j["zmq_reference"]["references"];
  REQUIRE(refs.size() == 2);
  for (const auto& p : j["zmq_reference"]["runs"]) {
    const auto run = p["run_index"].get<size_t>(), ref = p["reference_index"].get<size_t>();
    CHECK(refs[ref]["publish_batch"] == (run == 0 ? 1 : 16));
    CHECK(refs[ref]["received"] == 3100);
  }
  std::filesystem::remove_all(dir);
}
