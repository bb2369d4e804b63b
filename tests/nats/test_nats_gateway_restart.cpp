// The device gateway (eitstream's NATS device link, an ordered publisher) through a JetStream
// server that is killed mid-stream and started again 3 s later on the same port and store (longer
// than the 2 s acknowledgement wait, so publishes in flight at the kill time out and are sent
// again): the frames published meanwhile are kept, sent in order once the server is back, and the
// stream holds every frame exactly once, in order. (It once held frame 300 before 299: a publish
// made while libnats was already reconnecting sat in its reconnect buffer and was stored, stale,
// before the resend of the frame lost with the old connection; the sender now publishes nothing
// while the connection is down.)
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "eit/nats/nats_frames.hpp"
#include "eit/nats/nats_streams.hpp"
#include "nats_server.hpp"
#include "nats_test_support.hpp"

using namespace std::chrono_literals;

TEST_CASE("gateway through a server restart: every frame stored once, in order") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  constexpr size_t kFrames = 2000;
  eit::nats::NatsDeviceLinkOptions lo;
  lo.slots = 2048;
  lo.max_message_bytes = 64;
  auto link = eit::nats::open_nats_device_link(server.url() + "?site=icu&bed=2", lo);
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < kFrames; ++i) {
    if (i == 300) server.kill_now();
    if (i == 1800) server.start();  // ~3 s later (2 ms per frame)
    const std::string frame = fmt::format("frame {:06d}", i);
    CHECK(link->send(std::span(reinterpret_cast<const uint8_t*>(frame.data()), frame.size())));
    std::this_thread::sleep_until(t0 + 2ms * static_cast<int>(i + 1));
  }
  CHECK(link->drain(20s));
  CHECK(link->dropped() == 0);
  const auto gs = eit::nats::nats_gateway_stats(*link);
  REQUIRE(gs);
  MESSAGE("restart: gateway stored " << gs->stored << ", failures " << gs->failures << ", resent "
                                     << gs->resent << ", duplicates " << gs->duplicates
                                     << ", reordered " << gs->reordered << ", reconnects "
                                     << gs->reconnects);
  CHECK(gs->stored == kFrames);
  CHECK(gs->reconnects >= 1);  // the connection was lost and regained mid-stream
  link.reset();

  const auto frames = eit::test::fetch_all(server.url(), eit::nats::kRawStream, "eit.icu.2.raw",
                                           kFrames + 10, 3s);
  CHECK(frames.size() == kFrames);  // none twice (the fetch waits for more than there are)
  size_t first_wrong = frames.size();
  for (size_t i = 0; i < frames.size() && first_wrong == frames.size(); ++i)
    if (frames[i].data != fmt::format("frame {:06d}", i)) first_wrong = i;
  CHECK_MESSAGE(first_wrong == frames.size(),
                "frame " << first_wrong << " is "
                         << (first_wrong < frames.size() ? frames[first_wrong].data : std::string()));
}
