// `eitstream worker --since T` against a real `nats-server -js`: a bed never read before starts at
// T, so the worker reconstructs exactly the raw frames stored at or after T. T is taken 50 ms
// after the first gateway's frames were stored, as a rule in the same second (the consumer is
// asked for T's whole second and the worker drops those frames), and the second gateway starts at
// once (its frames stored within the 0.9 s by which libnats alone could move the start).
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "../nats/nats_server.hpp"
#include "../nats/nats_test_support.hpp"
#include "../nats/wall_clock.hpp"
#include "subprocess.hpp"
#include "worker_command.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;

TEST_CASE(
    "worker --since T: a new bed's frames stored before T are not reconstructed, every one "
    "after is, once and in order") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const eit::test::WorkerModelDir models("eit-worker-since-");

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

  Subprocess worker(eit::test::worker_command(server.url() + "?site=icu", models,
                                              {"--since", fmt::format("{:.3f}", t)}));
  CHECK(worker.wait_for_stderr("frames 70,", 60s));
  const auto images = eit::test::fetch_all(server.url(), "EIT_IMAGES", "eit.icu.1.img", 71, 3s);
  worker.signal(SIGINT);
  CHECK(worker.wait(30s) == 0);
  CHECK(eit::test::image_seqs(images) == eit::test::seq_range(50, 120));
}

#endif  // libnats
