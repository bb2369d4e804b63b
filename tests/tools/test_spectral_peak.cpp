// The global signal's spectral peak (`eitstream indices`' cross-check of the breathing rate): the
// frequency of a sinusoid comes back, invalid samples add nothing, and a short or rate-less
// signal gives NaN (written as null in the JSON).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

#include "../../tools/src/spectral_peak.hpp"

using eit::cli::spectral_peak;

namespace {

std::vector<double> sine(double f, double rate, size_t n) {
  std::vector<double> s(n);
  for (size_t i = 0; i < n; ++i)
    s[i] = 5 + std::sin(2 * std::numbers::pi * f * static_cast<double>(i) / rate);
  return s;
}

}  // namespace

TEST_CASE("a sinusoid's frequency comes back at slow and fast frame rates") {
  CHECK(spectral_peak(sine(0.25, 20, 2400), {}, 20) == doctest::Approx(0.25).epsilon(0.01));
  CHECK(spectral_peak(sine(0.5, 1000, 60000), {}, 1000) == doctest::Approx(0.5).epsilon(0.01));
  CHECK(spectral_peak(sine(2.0, 13, 1300), {}, 13) == doctest::Approx(2.0).epsilon(0.01));
}

TEST_CASE("invalid and non-finite samples do not move the peak") {
  auto s = sine(0.3, 20, 2400);
  std::vector<uint32_t> invalid(s.size(), 0);
  for (size_t i = 100; i < 140; ++i) {
    s[i] = 1e6;  // a spike the flags mark
    invalid[i] = 1;
  }
  s[500] = std::numeric_limits<double>::quiet_NaN();
  CHECK(spectral_peak(s, invalid, 20) == doctest::Approx(0.3).epsilon(0.01));
}

TEST_CASE("a long signal takes an FFT not a quadratic sum") {
  // 24 hours at 50 Hz: 4.3 million samples. The old DFT would take hours; this returns.
  const auto s = sine(0.2, 50, 24 * 3600 * 50);
  CHECK(spectral_peak(s, {}, 50) == doctest::Approx(0.2).epsilon(0.01));
}

TEST_CASE("too few samples or no rate give NaN") {
  CHECK(std::isnan(spectral_peak(sine(0.3, 20, 3), {}, 20)));
  CHECK(std::isnan(spectral_peak(sine(0.3, 20, 100), {}, 0)));
  CHECK(
      std::isnan(spectral_peak(sine(0.3, 20, 100), {}, std::numeric_limits<double>::quiet_NaN())));
}
