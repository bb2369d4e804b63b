// `run --source nats://…`'s nominal rate is the Eit-Rate its gateway states, read at set-up from
// the first frame the consumer delivers. That frame is kept for the first read: given back with a
// negative acknowledgement instead, it came again after the next frames when the source was read
// at once (9 of 10 frames, 1 counted out of order). Against a real `nats-server -js`.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "eit/nats/nats_frames.hpp"
#include "eit/recon/protocol.hpp"
#include "nats_server.hpp"
#include "raw_frame_io.hpp"

TEST_CASE(
    "a NATS source read right after set-up takes its gateway's Eit-Rate and delivers every frame "
    "in order") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const std::string bed = server.url() + "?site=icu&bed=3";
  const auto protocol = eit::recon::make_protocol({});
  const size_t n = protocol.n_meas();
  {
    eit::nats::NatsDeviceLinkOptions o;
    o.rate_hz = 12.5;
    auto link = eit::nats::open_nats_device_link(bed, o);
    REQUIRE(eit::test::store_frames(*link, n, 0, 10));
  }
  auto source = eit::nats::open_nats_source(bed, {}, protocol);
  CHECK(source->nominal_rate_hz() == 12.5);
  std::vector<uint64_t> expected;
  for (uint64_t seq = 0; seq < 10; ++seq) expected.push_back(seq);
  CHECK(eit::test::read_seqs(*source, n) == expected);
  CHECK(source->stats().reordered == 0);
}
