// OnlineBreathDetector on signals whose breaths are known.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "eit/indices/breath_detector.hpp"

using eit::indices::BreathDetectionOptions;
using eit::indices::DetectedBreath;
using eit::indices::OnlineBreathDetector;

namespace {

std::vector<DetectedBreath> detect(const std::vector<double>& x, double rate,
                                   BreathDetectionOptions o = {}, std::vector<bool> valid = {}) {
  OnlineBreathDetector d(rate, o);
  std::vector<DetectedBreath> out;
  for (size_t i = 0; i < x.size(); ++i)
    if (auto b = d.push(x[i], valid.empty() || valid[i])) out.push_back(*b);
  while (auto b = d.flush()) out.push_back(*b);
  return out;
}

// Valleys at t = k / f (cosine breathing), peaks half way.
std::vector<double> cosine(double rate, double f, double seconds, double amp = 1, double base = 5) {
  std::vector<double> x;
  for (size_t i = 0; i < static_cast<size_t>(rate * seconds); ++i) {
    const double t = static_cast<double>(i) / rate + 0.25 / f;  // start mid-inspiration
    x.push_back(base + amp * (1 - std::cos(2 * std::numbers::pi * f * t)) / 2);
  }
  return x;
}

}  // namespace

TEST_CASE("breaths of a cosine at 35/min come out one per period, valley-peak-valley") {
  const double rate = 13, f = 35.0 / 60;
  const auto b = detect(cosine(rate, f, 60), rate);
  REQUIRE(b.size() >= 32);
  for (const auto& x : b) {
    const double dur = static_cast<double>(x.end - x.start) / rate;
    CHECK(dur == doctest::Approx(1 / f).epsilon(0.08));
    CHECK(x.start < x.middle);
    CHECK(x.middle < x.end);
    CHECK(x.amplitude == doctest::Approx(1.0).epsilon(0.05));
  }
  for (size_t i = 1; i < b.size(); ++i) CHECK(b[i].start == b[i - 1].end);
}

TEST_CASE("a breath is reported before the next one ends (delay below one breath)") {
  const double rate = 50, f = 20.0 / 60;
  const auto x = cosine(rate, f, 40);
  OnlineBreathDetector d(rate);
  size_t reported = 0;
  for (size_t i = 0; i < x.size(); ++i)
    if (auto b = d.push(x[i])) {
      ++reported;
      CHECK(i - b->end < static_cast<size_t>(rate / f));  // less than one breath after its end
    }
  CHECK(reported >= 10);
}

TEST_CASE("a small bump between breaths does not split a breath (amplitude cut-off)") {
  const double rate = 50, f = 15.0 / 60;
  auto x = cosine(rate, f, 60);
  // A 3 % bump in the middle of every expiratory pause would be a breath of its own without the
  // cut-off and the minimum duration; the signal's valleys are at t = (k + 0.75) / f.
  for (size_t i = 0; i < x.size(); ++i) {
    const double t = static_cast<double>(i) / rate;
    const double phase = std::fmod(t * f + 0.25, 1.0);
    if (std::abs(phase - 0.0) < 0.02 || std::abs(phase - 1.0) < 0.02)
      x[i] += 0.03 * std::cos(std::numbers::pi * std::min(phase, 1 - phase) / 0.04);
  }
  const auto b = detect(x, rate);
  CHECK(b.size() >= 13);
  for (const auto& y : b)
    CHECK(static_cast<double>(y.end - y.start) / rate == doctest::Approx(1 / f).epsilon(0.1));
}

TEST_CASE("breaths next to invalid frames are dropped and counted") {
  const double rate = 20, f = 20.0 / 60;
  const auto x = cosine(rate, f, 60);
  std::vector<bool> valid(x.size(), true);
  valid[600] = false;  // t = 30 s
  OnlineBreathDetector d(rate);
  std::vector<DetectedBreath> b;
  for (size_t i = 0; i < x.size(); ++i)
    if (auto y = d.push(x[i], valid[i])) b.push_back(*y);
  CHECK(d.invalid_samples() == 1);
  CHECK(d.dropped_breaths() >= 1);
  for (const auto& y : b) CHECK((y.end + 10 <= 600 || y.start >= 600 + 10));
}

TEST_CASE("an outlier far outside the signal's range is treated as invalid") {
  const double rate = 20, f = 20.0 / 60;
  auto x = cosine(rate, f, 60);
  x[800] = 1000;  // after the guard has seen one averaging window
  OnlineBreathDetector d(rate);
  for (double v : x) d.push(v);
  CHECK(d.invalid_samples() == 1);
}

TEST_CASE("bad options and rates are refused at set-up") {
  CHECK_THROWS_AS(OnlineBreathDetector(0), std::invalid_argument);
  BreathDetectionOptions o;
  o.amplitude_cutoff_fraction = 1.5;
  CHECK_THROWS_AS(OnlineBreathDetector(50, o), std::invalid_argument);
}
