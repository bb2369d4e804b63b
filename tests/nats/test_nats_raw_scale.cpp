// Integer raw frames through NATS carry their scale: a gateway sending i16/i32 samples states it
// on each frame (Eit-Scale), and `run --source`'s and `reconstruct`'s readers multiply by it; they
// took the URI's scale= or 1, so without scale= the samples came out as raw integers. Frames that
// state none keep the URI's scale= (else 1). Against a real `nats-server -js`.
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

using namespace std::chrono_literals;
using eit::acquisition::IngestSampleType;

namespace {

constexpr double kScale = 1e-7;  // i16: up to 3.3 mV

std::vector<float> frame_values(size_t n, uint64_t seq) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(1e-3 + 5e-4 * std::sin(0.37 * static_cast<double>(i + seq)));
  return v;
}

// Stores `count` i16 frames of frame_values() at kScale; true when JetStream stored all.
bool store_i16_frames(eit::acquisition::DeviceLink& link, size_t n, uint64_t count) {
  std::vector<uint8_t> bytes(eit::acquisition::ingest_frame_size(IngestSampleType::kI16, n));
  for (uint64_t seq = 0; seq < count; ++seq) {
    eit::acquisition::encode_ingest_frame(bytes, IngestSampleType::kI16, seq, 0,
                                          frame_values(n, seq), kScale);
    if (!link.send(bytes)) return false;
  }
  return link.drain(5s);
}

// The largest |read − frame_values()| over the frames a source delivers; -1 when fewer than
// `count` came.
double largest_error(eit::pipeline::Source& source, size_t n, uint64_t count) {
  eit::pipeline::FramePool pool(1, n, 1);
  eit::pipeline::FrameSlot* slot = pool.try_acquire();
  double error = 0;
  uint64_t frames = 0;
  for (; frames < count; ++frames) {
    if (source.read(*slot, 3000ms) != eit::pipeline::ReadStatus::kFrame) break;
    const auto expected = frame_values(n, slot->seq);
    for (size_t i = 0; i < n; ++i)
      error = std::max(error, std::abs(static_cast<double>(slot->values[i]) - expected[i]));
  }
  pool.release(slot);
  return frames == count ? error : -1;
}

}  // namespace

TEST_CASE(
    "integer raw frames that state their Eit-Scale arrive within half a step of the float "
    "values and frames that state none keep the URI's scale") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const auto protocol = eit::recon::make_protocol({});
  const size_t n = protocol.n_meas();
  const double half_step = kScale / 2 * 1.001;  // and float rounding

  // Bed 20: a gateway that states the scale.
  const std::string stating = server.url() + "?site=icu&bed=20";
  {
    eit::nats::NatsDeviceLinkOptions o;
    o.integer_scale = kScale;
    auto link = eit::nats::open_nats_device_link(stating, o);
    REQUIRE(store_i16_frames(*link, n, 10));
  }
  auto replay = eit::nats::open_nats_replay_source(stating, {}, protocol, 1000);
  const double replay_error = largest_error(*replay, n, 10);
  CHECK(replay_error >= 0);
  CHECK(replay_error <= half_step);
  std::vector<std::string> warnings;
  auto durable = eit::nats::open_nats_source(stating, {}, protocol, &warnings);
  const double durable_error = largest_error(*durable, n, 10);
  CHECK(durable_error >= 0);
  CHECK(durable_error <= half_step);
  CHECK(warnings.empty());
  // A URI's scale= that disagrees with what the frames state: the frames' wins, with a warning.
  auto disagreeing = eit::nats::open_nats_replay_source(stating + "&scale=0.5", {}, protocol, 1000);
  CHECK(largest_error(*disagreeing, n, 10) <= half_step);
  auto warned = eit::nats::open_nats_source(server.url() + "?site=icu&bed=20&since=all&scale=0.5",
                                            {}, protocol, &warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("Eit-Scale 1e-07") != std::string::npos);

  // Bed 21: a gateway that states none (older, or one not built on eitstream): the URI's scale=.
  const std::string silent = server.url() + "?site=icu&bed=21";
  {
    auto link = eit::nats::open_nats_device_link(silent);
    REQUIRE(store_i16_frames(*link, n, 10));
  }
  auto scaled = eit::nats::open_nats_replay_source(fmt::format("{}&scale={}", silent, kScale), {},
                                                   protocol, 1000);
  CHECK(largest_error(*scaled, n, 10) <= half_step);
  auto unscaled = eit::nats::open_nats_replay_source(silent, {}, protocol, 1000);
  CHECK(largest_error(*unscaled, n, 10) > 1000);  // the raw integers, ~10,000
}
