// The per-frame path allocates nothing: IngestDecoder::decode and StreamSource::read over UDP
// and TCP, counted per thread by counting_new.hpp (every malloc, operator new included; operator
// new alone under a sanitizer), so a sender thread's allocations do not count against the reader.
#include <doctest/doctest.h>

#include <thread>

#include "counting_new.hpp"
#include "eit/acquisition/device_link.hpp"
#include "eit/acquisition/ingest_decoder.hpp"
#include "eit/acquisition/live_source.hpp"
#include "live_test_support.hpp"

using eit::test::t_allocations;

using namespace eit::acquisition;

namespace {

std::vector<uint8_t> frame(uint64_t seq, size_t n) {
  std::vector<uint8_t> out(ingest_frame_size(IngestSampleType::kF32, n));
  encode_ingest_frame(out, IngestSampleType::kF32, seq, 5, eit::test::test_frame(seq, n));
  return out;
}

}  // namespace

TEST_CASE("IngestDecoder::decode allocates nothing") {
  const size_t n = 208;
  std::vector<uint8_t> stream;
  for (uint64_t s = 0; s < 100; ++s) {
    const auto f = frame(s, n);
    stream.insert(stream.end(), f.begin(), f.end());
    stream.push_back('x');  // garbage between frames
  }
  IngestDecoder d(n);
  eit::test::OwnedSlot slot(n);
  const uint64_t before = t_allocations;
  size_t pos = 0, frames = 0;
  while (pos < stream.size()) {
    const auto r = d.decode(
        std::span(stream).subspan(pos, std::min<size_t>(97, stream.size() - pos)), slot.slot);
    pos += r.consumed;
    frames += r.frame;
  }
  CHECK(t_allocations - before == 0);
  CHECK(frames == 100);
}

TEST_CASE("StreamSource::read over udp and tcp allocates nothing per frame once running") {
  const size_t n = 208;
  const auto protocol = eit::test::adjacent16();
  for (const char* uri : {"udp://127.0.0.1:0", "tcp-listen://127.0.0.1:0"}) {
    CAPTURE(uri);
    auto source = open_live_source(uri, {}, protocol);
    const bool tcp = std::string(uri).starts_with("tcp");
    auto link = open_device_link((tcp ? "tcp://" : "udp://") + source->endpoint());
    std::thread device([&] {
      REQUIRE(link->wait_for_receiver(std::chrono::seconds(5)));
      for (uint64_t s = 0; s < 200; ++s) link->send(frame(s, n));
    });
    eit::test::OwnedSlot slot(n);
    // Warm-up: the first frames may touch Asio's per-thread operation cache.
    size_t got = 0;
    while (got < 10 &&
           source->read(slot.slot, std::chrono::seconds(5)) == eit::pipeline::ReadStatus::kFrame)
      ++got;
    const uint64_t before = t_allocations;
    while (got < 200 &&
           source->read(slot.slot, std::chrono::seconds(5)) == eit::pipeline::ReadStatus::kFrame)
      ++got;
    const uint64_t allocations = t_allocations - before;
    device.join();
    CHECK(got == 200);
    CHECK(allocations == 0);
  }
}
