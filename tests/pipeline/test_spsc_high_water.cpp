// The queue's high-water mark follows the true depth, not the producer's stale view of the
// consumer (which would make it creep up to the capacity in any long run).
#include <doctest/doctest.h>

#include "eit/pipeline/spsc_queue.hpp"

TEST_CASE("high-water mark of a queue that never holds more than two items stays at two") {
  eit::pipeline::SpscQueue<int> q(64);
  int out = 0;
  for (int i = 0; i < 10'000; ++i) {
    REQUIRE(q.try_push(i));
    if (i % 2 == 1) {
      REQUIRE(q.try_pop(out));
      REQUIRE(q.try_pop(out));
    }
  }
  CHECK(q.high_water() == 2);
  for (int i = 0; i < 5; ++i) REQUIRE(q.try_push(i));
  CHECK(q.high_water() == 5);
}
