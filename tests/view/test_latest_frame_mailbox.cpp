// LatestFrameMailbox: the consumer always gets the newest message whole, never an older one after
// a newer one, and every message it missed is counted.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "eit/view/latest_frame_mailbox.hpp"

using eit::view::LatestFrameMailbox;

namespace {

std::span<const std::byte> bytes_of(const uint64_t& v) { return std::as_bytes(std::span(&v, 1)); }

uint64_t first_word(std::span<const std::byte> m) {
  uint64_t v = 0;
  std::memcpy(&v, m.data(), sizeof v);
  return v;
}

}  // namespace

TEST_CASE("mailbox: take() returns nothing until written, then the newest message once") {
  LatestFrameMailbox box(64);
  CHECK_FALSE(box.take());
  CHECK(box.latest().empty());
  const uint64_t a = 1, b = 2, c = 3;
  REQUIRE(box.write(bytes_of(a), bytes_of(b)));
  REQUIRE(box.take());
  REQUIRE(box.latest().size() == 16);
  CHECK(first_word(box.latest()) == 1);
  CHECK(first_word(box.latest().subspan(8)) == 2);
  CHECK_FALSE(box.take());  // nothing newer
  REQUIRE(box.write(bytes_of(b), {}));
  REQUIRE(box.write(bytes_of(c), {}));
  REQUIRE(box.take());
  CHECK(first_word(box.latest()) == 3);
  CHECK(box.latest().size() == 8);
  CHECK(box.written() == 3);
  CHECK(box.overwritten() == 1);  // message b was never taken
}

TEST_CASE("mailbox: a message larger than the capacity is refused and counted") {
  LatestFrameMailbox box(12);
  const uint64_t a = 7, b = 8;
  CHECK_FALSE(box.write(bytes_of(a), bytes_of(b)));
  CHECK(box.oversized() == 1);
  CHECK_FALSE(box.take());
}

TEST_CASE("mailbox: across threads the consumer sees whole messages, in increasing order") {
  // Each message is 64 copies of its sequence number; a torn read would mix two numbers.
  constexpr uint64_t kMessages = 200000;
  LatestFrameMailbox box(64 * sizeof(uint64_t));
  std::atomic<bool> done{false};
  std::thread producer([&] {
    std::vector<uint64_t> words(64);
    for (uint64_t seq = 1; seq <= kMessages; ++seq) {
      std::fill(words.begin(), words.end(), seq);
      box.write(std::as_bytes(std::span(words)), {});
    }
    done = true;
  });
  uint64_t last = 0, taken = 0, torn = 0, backwards = 0;
  while (true) {
    const bool finished = done.load();
    if (box.take()) {
      const auto m = box.latest();
      const uint64_t seq = first_word(m);
      for (size_t i = 1; i < 64; ++i)
        if (first_word(m.subspan(i * 8)) != seq) ++torn;
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
  CHECK(box.written() == kMessages);
  CHECK(taken + box.overwritten() == kMessages);
}
