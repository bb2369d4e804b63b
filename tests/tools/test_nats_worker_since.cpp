// `eitstream worker --since T` against a real `nats-server -js`: a bed never read before starts at
// T, so the worker reconstructs exactly the raw frames stored at or after T. T is taken 50 ms
// after the first gateway's frames were stored, as a rule in the same second (the consumer is
// asked for T's whole second and the worker drops those frames), and the second gateway starts at
// once (its frames stored within the 0.9 s by which libnats alone could move the start).
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <cmath>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "../nats/nats_server.hpp"
#include "../nats/nats_test_support.hpp"
#include "../nats/wall_clock.hpp"
#include "eit/sinks/image_header.hpp"
#include "subprocess.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;

TEST_CASE(
    "worker --since T: a new bed's frames stored before T are not reconstructed, every one "
    "after is, once and in order") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const auto models =
      std::filesystem::temp_directory_path() / ("eit-worker-since-" + std::to_string(getpid()));
  std::filesystem::create_directories(models);
  Subprocess build({EITSTREAM_BIN, "model", "build", "-o", (models / "default.h5").string()});
  REQUIRE(build.wait(120s) == 0);

  const std::string bed = server.url() + "?site=icu&bed=1";
  const auto emulate = [&](int frames, int seq_start) {
    Subprocess d({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to", bed, "--count",
                  std::to_string(frames), "--seq-start", std::to_string(seq_start), "--unpaced"});
    REQUIRE(d.wait(120s) == 0);  // the gateway ends once JetStream stored every frame
  };
  emulate(50, 0);
  const double stored = eit::test::epoch_seconds();
  std::this_thread::sleep_for(50ms);
  const double t = eit::test::epoch_seconds();
  emulate(70, 50);
  if (std::floor(stored) != std::floor(t))
    MESSAGE("T is in the next second after the first frames: this run does not drop any");

  Subprocess worker({EITSTREAM_BIN, "worker", server.url() + "?site=icu", "--model-dir",
                     models.string(), "--since", fmt::format("{:.3f}", t), "--status-interval",
                     "0.2"});
  CHECK(worker.wait_for_stderr("frames 70,", 60s));
  const auto images = eit::test::fetch_all(server.url(), "EIT_IMAGES", "eit.icu.1.img", 71, 3s);
  worker.signal(SIGINT);
  CHECK(worker.wait(30s) == 0);
  std::vector<uint64_t> seqs, expected;
  for (const auto& m : images) {
    const auto h =
        eit::sinks::decode_image_header(std::as_bytes(std::span(m.data.data(), m.data.size())));
    REQUIRE(h.has_value());
    seqs.push_back(h->seq);
  }
  for (uint64_t s = 50; s < 120; ++s) expected.push_back(s);
  CHECK(seqs == expected);
  std::error_code ec;
  std::filesystem::remove_all(models, ec);
}

#endif  // libnats
