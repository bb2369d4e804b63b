#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <thread>

#include "eit/pipeline/backoff.hpp"
#include "eit/pipeline/frame_pool.hpp"
#include "eit/pipeline/spsc_queue.hpp"

using namespace eit::pipeline;

TEST_CASE("pool hands out distinct 64-byte-aligned slots until empty") {
  FramePool pool(4, 208, 1024);
  std::set<FrameSlot*> seen;
  for (int i = 0; i < 4; ++i) {
    FrameSlot* s = pool.try_acquire();
    REQUIRE(s != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(s->values) % 64 == 0);
    CHECK(reinterpret_cast<uintptr_t>(s->image) % 64 == 0);
    seen.insert(s);
  }
  CHECK(seen.size() == 4);
  CHECK(pool.try_acquire() == nullptr);
  pool.release(*seen.begin());
  CHECK(pool.try_acquire() == *seen.begin());
}

TEST_CASE("pool rejects empty sizes with a message naming them") {
  CHECK_THROWS_WITH_AS(FramePool(4, 0, 10), doctest::Contains("values per frame (0)"),
                       std::invalid_argument);
}

TEST_CASE("slots cycle source → queue → sink → pool a million times without loss or aliasing") {
  constexpr uint64_t kFrames = 1'000'000;
  FramePool pool(8, 16, 16);
  SpscQueue<FrameSlot*> q(4);
  std::thread sink([&] {
    Backoff backoff;
    uint64_t expected = 0, bad = 0;
    while (expected < kFrames) {
      FrameSlot* s;
      if (!q.try_pop(s)) {
        backoff.pause();
        continue;
      }
      backoff.reset();
      bad += (s->seq != expected) || (s->values[0] != static_cast<float>(expected % 4096));
      ++expected;
      pool.release(s);
    }
    CHECK(bad == 0);
  });
  Backoff backoff;
  for (uint64_t i = 0; i < kFrames; ++i) {
    FrameSlot* s;
    while ((s = pool.try_acquire()) == nullptr) backoff.pause();
    s->seq = i;
    s->values[0] = static_cast<float>(i % 4096);
    while (!q.try_push(s)) backoff.pause();
    backoff.reset();
  }
  sink.join();
}
