#include <doctest/doctest.h>

#include <cstdint>
#include <thread>

#include "eit/pipeline/backoff.hpp"
#include "eit/pipeline/spsc_queue.hpp"

using eit::pipeline::Backoff;
using eit::pipeline::SpscQueue;

TEST_CASE("queue rounds capacity up to a power of two and reports full and empty") {
  SpscQueue<int> q(5);
  CHECK(q.capacity() == 8);
  int out = 0;
  CHECK_FALSE(q.try_pop(out));
  for (int i = 0; i < 8; ++i) CHECK(q.try_push(i));
  CHECK_FALSE(q.try_push(99));
  CHECK(q.high_water() == 8);
  for (int i = 0; i < 8; ++i) {
    REQUIRE(q.try_pop(out));
    CHECK(out == i);
  }
  CHECK_FALSE(q.try_pop(out));
}

TEST_CASE("queue delivers millions of items in order across two threads") {
  constexpr uint64_t kItems = 4'000'000;
  SpscQueue<uint64_t> q(64);
  std::thread producer([&] {
    Backoff backoff;
    for (uint64_t i = 0; i < kItems; ++i) {
      while (!q.try_push(i)) backoff.pause();
      backoff.reset();
    }
  });
  uint64_t expected = 0, bad = 0;
  Backoff backoff;
  while (expected < kItems) {
    uint64_t v;
    if (q.try_pop(v)) {
      bad += (v != expected);
      ++expected;
      backoff.reset();
    } else {
      backoff.pause();
    }
  }
  producer.join();
  CHECK(bad == 0);
  CHECK(q.empty_approx());
  CHECK(q.high_water() <= q.capacity());
}
