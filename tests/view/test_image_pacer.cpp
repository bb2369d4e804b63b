// ImagePacer: a page asking for R images/s gets at most R per second on average plus a burst of
// kBurst, nothing is held back when images come slower than R, and due_ns() says exactly when the
// next image may go.
#include <doctest/doctest.h>

#include <cstdint>

#include "eit/view/image_pacer.hpp"

using eit::view::ImagePacer;

namespace {
constexpr int64_t kMs = 1'000'000;
}

TEST_CASE("pacer: unpaced lets everything through") {
  ImagePacer p;
  CHECK_FALSE(p.paced());
  CHECK(p.allowed(0) == SIZE_MAX);
  p.spend();
  CHECK(p.allowed(0) == SIZE_MAX);
  CHECK(p.due_ns(123) == 123);
  p.set_rate(0, 0);
  CHECK_FALSE(p.paced());
  p.set_rate(-5, 0);
  CHECK_FALSE(p.paced());
}

TEST_CASE("pacer: a 1 kHz stream to a page asking for 120/s gets 120/s plus the burst") {
  ImagePacer p;
  p.set_rate(120, 0);
  REQUIRE(p.paced());
  int sent = 0;
  for (int64_t t = 0; t < 10'000 * kMs; t += kMs)  // an image every millisecond for 10 s
    if (p.allowed(t) >= 1) {
      p.spend();
      ++sent;
    }
  CHECK(sent >= 1200);
  CHECK(sent <= 1200 + static_cast<int>(ImagePacer::kBurst) + 1);
}

TEST_CASE("pacer: a 50 frames/s stream is never held back at 120/s") {
  ImagePacer p;
  p.set_rate(120, 0);
  for (int64_t t = 0; t < 5'000 * kMs; t += 20 * kMs) {
    REQUIRE(p.allowed(t) >= 1);
    p.spend();
  }
}

TEST_CASE("pacer: after a pause a burst of kBurst goes at once, then one per interval") {
  ImagePacer p;
  p.set_rate(100, 0);  // one token per 10 ms
  const int64_t t = 1'000 * kMs;
  CHECK(p.allowed(t) == static_cast<size_t>(ImagePacer::kBurst));
  for (int i = 0; i < static_cast<int>(ImagePacer::kBurst); ++i) p.spend();
  CHECK(p.allowed(t) == 0);
  CHECK(p.due_ns(t) == t + 10 * kMs);
  CHECK(p.allowed(t + 9 * kMs) == 0);
  CHECK(p.due_ns(t + 9 * kMs) == t + 10 * kMs);
  CHECK(p.allowed(t + 10 * kMs) == 1);
  CHECK(p.due_ns(t + 10 * kMs) == t + 10 * kMs);
}

TEST_CASE("pacer: a clock that goes back adds no tokens, absurd rates are clamped") {
  ImagePacer p;
  p.set_rate(10, 100 * kMs);
  for (int i = 0; i < static_cast<int>(ImagePacer::kBurst); ++i) p.spend();
  CHECK(p.allowed(50 * kMs) == 0);
  CHECK(p.allowed(100 * kMs) == 0);
  p.set_rate(1e12, 0);
  CHECK(p.rate_hz() == ImagePacer::kMaxRateHz);
}

TEST_CASE(
    "pacer: a vanishing rate is clamped so the next image is due within 100 s, never before now") {
  ImagePacer p;
  p.set_rate(1e-300, 0);
  CHECK(p.rate_hz() == ImagePacer::kMinRateHz);
  for (int i = 0; i < static_cast<int>(ImagePacer::kBurst); ++i) p.spend();
  const int64_t due = p.due_ns(kMs);
  CHECK(due > kMs);
  CHECK(due <= kMs + static_cast<int64_t>(1e9 / ImagePacer::kMinRateHz));
}
