// The raw-frame sources from a time (since=T) against a real `nats-server -js`: `run --source`'s
// durable pull consumer and `reconstruct`'s replay (an ordered consumer) read exactly the frames
// stored at or after T. Ten frames are stored early in a second, T is taken in the same second
// 80–95 ms in (where libnats alone would send a start 0.8 s later, past the next ten frames), and
// ten more frames follow at once: both sources read seq 10–19 and nothing else.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/nats/nats_frames.hpp"
#include "eit/recon/protocol.hpp"
#include "nats_server.hpp"
#include "raw_frame_io.hpp"
#include "wall_clock.hpp"

using namespace std::chrono_literals;

TEST_CASE(
    "run --source and reconstruct from since=T read the frames stored at or after T, not "
    "those stored in T's second before it") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const std::string bed = server.url() + "?site=icu&bed=4";
  const auto protocol = eit::recon::make_protocol({});
  const size_t n = protocol.n_meas();

  // (A link stores frames until drained; one for each group.)
  auto before = eit::nats::open_nats_device_link(bed);
  auto after = eit::nats::open_nats_device_link(bed);
  eit::test::epoch_seconds_at_fraction(0, 10'000'000);
  REQUIRE(eit::test::store_frames(*before, n, 0, 10));
  const double stored_before = eit::test::epoch_seconds();
  const double t = eit::test::epoch_seconds_early_in_a_second();
  REQUIRE(eit::test::store_frames(*after, n, 10, 10));
  if (std::floor(stored_before) != std::floor(t))
    MESSAGE("the first frames were stored late (" << fmt::format("{:.3f}", stored_before)
                                                  << "): this run does not cover the gate");

  const std::string uri = fmt::format("{}&since={:.3f}", bed, t);
  std::vector<uint64_t> expected;
  for (uint64_t seq = 10; seq < 20; ++seq) expected.push_back(seq);

  auto replay = eit::nats::open_nats_replay_source(uri, {}, protocol, 1000);
  CHECK(eit::test::read_seqs(*replay, n) == expected);
  auto durable = eit::nats::open_nats_source(uri, {}, protocol);
  CHECK(eit::test::read_seqs(*durable, n) == expected);
}
