// The host-noise probe (eit/bench/host_noise.hpp, `eitstream bench --host-noise`): how gaps are
// counted, that a CPU shared with a busy thread shows the time it lost, that a CPU the process
// may not use is reported rather than measured, which CPUs --cpus makes it probe, and the
// option's checks and report in the real binary.
#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eit/bench/host_noise.hpp"
#include "eit/pipeline/thread_pin.hpp"
#include "file_text.hpp"

namespace fs = std::filesystem;
using eit::bench::CpuRequest;
using eit::bench::StallCounts;

TEST_CASE("a stall is a gap of 2 us or more and each is counted in every band it reaches") {
  StallCounts s;
  for (const int64_t gap : {40, 1'999, 2'000, 9'999, 10'000, 50'000, 100'000, 250'000})
    s.add_gap(gap);
  s.span_ns = 1'000'000'000;
  CHECK(s.reads == 8);
  CHECK(s.lost_gaps == 6);
  CHECK(s.ge_10us == 4);
  CHECK(s.ge_50us == 3);
  CHECK(s.ge_100us == 2);
  CHECK(s.longest_ns == 250'000);
  CHECK(s.lost_ns == 2'000 + 9'999 + 10'000 + 50'000 + 100'000 + 250'000);
  CHECK(s.lost_fraction() == doctest::Approx(421'999e-9));
  CHECK(s.per_second(s.ge_50us) == doctest::Approx(3.0));
}

TEST_CASE("a CPU shared with a busy thread shows the time the probe lost to it") {
  const int cpu = eit::pipeline::allowed_cpus().front();
  std::atomic<bool> stop{false};
  std::atomic<int> pinned{-1};
  std::thread busy([&] {
    pinned = eit::pipeline::pin_this_thread(cpu);
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  while (pinned.load() < 0) std::this_thread::yield();
  REQUIRE(pinned.load() == 0);
  const auto noise = eit::bench::probe_host_noise({cpu}, 0.4);
  stop = true;
  busy.join();
  REQUIRE(noise.cpus.size() == 1);
  const auto& c = noise.cpus.front();
  CHECK(c.cpu == cpu);
  CHECK(c.pin_error == 0);
  const StallCounts& s = c.stalls;
  INFO("lost ", s.lost_fraction(), " longest ", s.longest_ns, " ns");
  CHECK(s.span_ns >= 400'000'000);
  // Two runnable threads on one CPU share it in scheduler slices (≥ 0.7 ms each): the probe loses
  // about half the time, in gaps far longer than any interrupt.
  CHECK(s.lost_fraction() > 0.2);
  CHECK(s.longest_ns >= 300'000);
  CHECK(s.ge_100us >= 10);
}

TEST_CASE("a CPU the process may not use is reported as not pinned and not measured") {
  const auto noise = eit::bench::probe_host_noise({CPU_SETSIZE + 1}, 0.05);
  REQUIRE(noise.cpus.size() == 1);
  CHECK(noise.cpus.front().pin_error == EINVAL);
  CHECK(noise.cpus.front().stalls.reads == 0);
  const std::string text = eit::bench::format_host_noise(noise);
  CHECK(text.find("not pinned") != std::string::npos);
}

TEST_CASE("the probe takes the CPUs --cpus pins, each once, and none without --cpus") {
  const std::vector<int> allowed{0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(eit::bench::pinned_cpus_of(CpuRequest{}, allowed).empty());
  CHECK(eit::bench::pinned_cpus_of(CpuRequest{false, {3, 1, 3}}, allowed) ==
        std::vector<int>{1, 3});
  // auto: the largest layout's four threads, CPU 0 left out when there is room.
  CHECK(eit::bench::pinned_cpus_of(CpuRequest{true, {}}, allowed) == std::vector<int>{1, 2, 3, 4});
  CHECK(eit::bench::pinned_cpus_of(CpuRequest{true, {}}, {0, 1}) == std::vector<int>{0, 1});
}

TEST_CASE("bench --host-noise probes before the runs and reports each CPU or says why not") {
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_host_noise_{}", ::getpid());
  fs::create_directories(dir);
  const auto bench = [&](const std::string& args) {
    fs::remove(dir / "b.json");
    const int status = std::system(
        fmt::format("'{}' bench --rate 2000 --size 64x208 --transport inproc --frames 50 "
                    "--warmup 5 --zmq-reference off {} --json '{}/b.json' > '{}/out.txt' 2>&1",
                    EITSTREAM_BIN, args, dir.string(), dir.string())
            .c_str());
    return std::pair{status, eit::test::file_text(dir / "out.txt")};
  };
  const int cpu = eit::pipeline::allowed_cpus().front();

  auto [status, out] = bench(fmt::format("--cpus {} --host-noise 0.2", cpu));
  INFO(out);
  REQUIRE(status == 0);
  CHECK(out.find("host noise: spinning on the CPUs --cpus") != std::string::npos);
  CHECK(out.find("── host noise:") != std::string::npos);
  auto j = nlohmann::json::parse(eit::test::file_text(dir / "b.json"))["host_noise"];
  CHECK(j["skipped"] == "");
  CHECK(j["seconds"] == 0.2);
  REQUIRE(j["cpus"].size() == 1);
  CHECK(j["cpus"][0]["cpu"] == cpu);
  CHECK(j["cpus"][0]["pinned"] == true);
  CHECK(j["cpus"][0]["span_ns"].get<int64_t>() >= 200'000'000);
  CHECK(j["cpus"][0]["reads"].get<uint64_t>() > 1000);

  std::tie(status, out) = bench("");  // auto without --cpus: nothing probed, and why
  REQUIRE(status == 0);
  j = nlohmann::json::parse(eit::test::file_text(dir / "b.json"))["host_noise"];
  CHECK(j["cpus"].empty());
  CHECK(j["skipped"].get<std::string>().find("no --cpus was given") != std::string::npos);
  CHECK(out.find("host noise: not probed") != std::string::npos);

  for (const char* bad : {"-1", "abc", "61", "0.5s", ""}) {
    std::tie(status, out) = bench(fmt::format("--host-noise '{}'", bad));
    CHECK(status != 0);
    CHECK(out.find(fmt::format("--host-noise '{}'", bad)) != std::string::npos);
    CHECK(!fs::exists(dir / "b.json"));
  }
  fs::remove_all(dir);
}
