// shm:// through the real binary: `eitstream listen shm://NAME` started before `eitstream run
// --publish shm://NAME` receives the run's images in order and sees the series end; `eitstream
// bench --transport shm` measures the ring with its subscriber child (every image received) and
// a bare-shm reference row. Checks counts and structure, never timing numbers.
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "file_text.hpp"
#include "subprocess.hpp"

using eit::test::contains;
using eit::test::run_eitstream;

TEST_CASE("listen shm://NAME gets the images of run --publish shm://NAME in order, then the end") {
  const std::string uri = fmt::format("shm://eit-cli-test-{}", ::getpid());
  eit::test::Subprocess listener(
      {EITSTREAM_BIN, "listen", uri, "--summary", "--exit-on-end", "--timeout", "60"});
  const auto run =
      run_eitstream(fmt::format("run --publish {} --fps 500 --frames 200 --quiet", uri));
  CHECK(run.code == 0);
  CHECK(contains(run.output, fmt::format("also publishing to shared memory {}", uri)));
  REQUIRE(listener.wait(std::chrono::seconds(30)) == 0);
  const std::string& out = listener.out();
  INFO(out);
  // The listener looks for the ring every 2 ms: it may miss the first frames, never later ones.
  CHECK(contains(out, "missing by seq 0, reported dropped 0, out of order 0, malformed 0"));
  CHECK(contains(out, "series ended"));
  const size_t at = out.find("images ");
  REQUIRE(at != std::string::npos);
  const int images = std::stoi(out.substr(at + 7));
  CHECK(images >= 100);
  CHECK(images <= 200);
}

TEST_CASE("bench --transport shm measures the ring: every image received, a bare-shm reference") {
  const auto dir =
      std::filesystem::temp_directory_path() / fmt::format("eit_shm_bench_{}", ::getpid());
  std::filesystem::create_directories(dir);
  const auto result = run_eitstream(fmt::format(
      "bench --rate 2000 --size 256x208 --transport shm --frames 300 --warmup 50 --quiet "
      "--zmq-reference on --json '{}/b.json'",
      dir.string()));
  REQUIRE(result.code == 0);
  const auto j = nlohmann::json::parse(eit::test::file_text(dir / "b.json"));
  std::filesystem::remove_all(dir);
  const auto& run = j["runs"][0];
  CHECK(run["config"]["transport"] == "shm");
  CHECK(run["config"]["pattern"] == "ring");
  CHECK(run["frames"]["measured"] == 300);
  CHECK(run["counters"]["published"] == 350);
  CHECK(run["counters"]["subscriber_received"] == 350);  // 1024 slots: a 2 kHz reader keeps up
  const auto& ref = j["zmq_reference"]["references"][0];
  CHECK(ref["transport"] == "shm");
  CHECK(ref["pattern"] == "ring");
  CHECK(ref["message_bytes"] == 112 + 256 * 4);
  CHECK(ref["sent"] == 350);
  CHECK(ref["received"] == 350);
  CHECK(ref["lost"] == 0);
  CHECK(ref["one_way"]["n"] == 300);
  CHECK(ref["send_call"]["n"] == 300);  // the ring's publish call, per message
}
