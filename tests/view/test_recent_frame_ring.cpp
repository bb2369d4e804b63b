// RecentFrameRing: the consumer gets whole messages oldest first, never an older one after a newer
// one, the last `slots` messages survive a consumer that was away, and every message it missed is
// counted.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "eit/view/recent_frame_ring.hpp"

using eit::view::RecentFrameRing;

namespace {

std::span<const std::byte> bytes_of(const uint64_t& v) { return std::as_bytes(std::span(&v, 1)); }

uint64_t word_at(const std::vector<std::byte>& m, size_t i) {
  uint64_t v = 0;
  std::memcpy(&v, m.data() + 8 * i, sizeof v);
  return v;
}

}  // namespace

TEST_CASE("ring: take() returns nothing until written, then each message once, oldest first") {
  RecentFrameRing ring(64, 4);
  std::vector<std::byte> out;
  CHECK_FALSE(ring.take(out));
  const uint64_t a = 1, b = 2, c = 3;
  REQUIRE(ring.write(bytes_of(a), bytes_of(b)));
  REQUIRE(ring.take(out));
  REQUIRE(out.size() == 16);
  CHECK(word_at(out, 0) == 1);
  CHECK(word_at(out, 1) == 2);
  CHECK_FALSE(ring.take(out));  // nothing newer
  REQUIRE(ring.write(bytes_of(b), {}));
  REQUIRE(ring.write(bytes_of(c), {}));
  REQUIRE(ring.take(out));
  CHECK(word_at(out, 0) == 2);
  CHECK(out.size() == 8);
  REQUIRE(ring.take(out));
  CHECK(word_at(out, 0) == 3);
  CHECK_FALSE(ring.take(out));
  CHECK(ring.written() == 3);
  CHECK(ring.overwritten() == 0);
}

TEST_CASE("ring: a consumer that was away gets the newest `slots` messages, the rest counted") {
  RecentFrameRing ring(8, 4);
  for (uint64_t v = 1; v <= 10; ++v) REQUIRE(ring.write(bytes_of(v), {}));
  std::vector<std::byte> out;
  std::vector<uint64_t> got;
  while (ring.take(out)) got.push_back(word_at(out, 0));
  CHECK(got == std::vector<uint64_t>{7, 8, 9, 10});
  CHECK(ring.overwritten() == 6);
}

TEST_CASE("ring: sizes that are not whole words, and a message larger than the capacity") {
  RecentFrameRing ring(12, 2);
  const std::byte head[3] = {std::byte{1}, std::byte{2}, std::byte{3}};
  const std::byte body[9] = {std::byte{4}, std::byte{5},  std::byte{6},  std::byte{7}, std::byte{8},
                             std::byte{9}, std::byte{10}, std::byte{11}, std::byte{12}};
  REQUIRE(ring.write(head, body));
  std::vector<std::byte> out;
  REQUIRE(ring.take(out));
  REQUIRE(out.size() == 12);
  for (size_t i = 0; i < 12; ++i) CHECK(out[i] == std::byte(i + 1));
  const uint64_t a = 7, b = 8;
  CHECK_FALSE(ring.write(bytes_of(a), bytes_of(b)));
  CHECK(ring.oversized() == 1);
  CHECK_FALSE(ring.take(out));
}

TEST_CASE("ring: across threads the consumer sees whole messages, in increasing order") {
  // Each message is 64 copies of its sequence number; a torn read would mix two numbers.
  constexpr uint64_t kMessages = 200000;
  RecentFrameRing ring(64 * sizeof(uint64_t), 8);
  std::atomic<bool> done{false};
  std::thread producer([&] {
    std::vector<uint64_t> words(64);
    for (uint64_t seq = 1; seq <= kMessages; ++seq) {
      std::fill(words.begin(), words.end(), seq);
      ring.write(std::as_bytes(std::span(words)), {});
    }
    done = true;
  });
  std::vector<std::byte> out;
  uint64_t last = 0, taken = 0, torn = 0, backwards = 0;
  while (true) {
    const bool finished = done.load();
    if (ring.take(out)) {
      const uint64_t seq = word_at(out, 0);
      for (size_t i = 1; i < 64; ++i)
        if (word_at(out, i) != seq) ++torn;
      if (seq <= last) ++backwards;
      last = seq;
      ++taken;
    } else if (finished) {
      break;
    }
  }
  producer.join();
  CHECK(torn == 0);
  CHECK(backwards == 0);
  CHECK(last == kMessages);  // the newest message is never lost
  CHECK(ring.written() == kMessages);
  CHECK(taken + ring.overwritten() == kMessages);
}
