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

#include "eit/acquisition/ingest_frame.hpp"
#include "eit/nats/nats_frames.hpp"
#include "eit/pipeline/frame_pool.hpp"
#include "eit/recon/protocol.hpp"
#include "nats_server.hpp"
#include "wall_clock.hpp"

using namespace std::chrono_literals;

namespace {

// Stores frames seq first..first+count-1 through a device link opened beforehand (connecting
// takes a while); true when JetStream stored all.
bool store_frames(eit::acquisition::DeviceLink& link, size_t n_values, uint64_t first,
                  uint64_t count) {
  const std::vector<float> values(n_values, 1.0f);
  std::vector<uint8_t> bytes(
      eit::acquisition::ingest_frame_size(eit::acquisition::IngestSampleType::kF32, n_values));
  for (uint64_t seq = first; seq < first + count; ++seq) {
    eit::acquisition::encode_ingest_frame(bytes, eit::acquisition::IngestSampleType::kF32, seq, 0,
                                          values);
    if (!link.send(bytes)) return false;
  }
  return link.drain(5s);
}

// The seqs a source reads until it ends or nothing comes for 1.5 s.
std::vector<uint64_t> read_seqs(eit::pipeline::Source& source, size_t n_values) {
  eit::pipeline::FramePool pool(1, n_values, 1);
  eit::pipeline::FrameSlot* slot = pool.try_acquire();
  std::vector<uint64_t> seqs;
  while (seqs.size() < 100) {
    const auto s = source.read(*slot, 1500ms);
    if (s != eit::pipeline::ReadStatus::kFrame) break;
    seqs.push_back(slot->seq);
  }
  pool.release(slot);
  return seqs;
}

}  // namespace

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
  REQUIRE(store_frames(*before, n, 0, 10));
  const double stored_before = eit::test::epoch_seconds();
  const double t = eit::test::epoch_seconds_early_in_a_second();
  REQUIRE(store_frames(*after, n, 10, 10));
  if (std::floor(stored_before) != std::floor(t))
    MESSAGE("the first frames were stored late (" << fmt::format("{:.3f}", stored_before)
                                                  << "): this run does not cover the gate");

  const std::string uri = fmt::format("{}&since={:.3f}", bed, t);
  std::vector<uint64_t> expected;
  for (uint64_t seq = 10; seq < 20; ++seq) expected.push_back(seq);

  auto replay = eit::nats::open_nats_replay_source(uri, {}, protocol, 1000);
  CHECK(read_seqs(*replay, n) == expected);
  auto durable = eit::nats::open_nats_source(uri, {}, protocol);
  CHECK(read_seqs(*durable, n) == expected);
}
