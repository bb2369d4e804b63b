#include "spectral_peak.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include <unsupported/Eigen/FFT>

namespace eit::cli {
namespace {

constexpr size_t kMaxPadded = size_t{1} << 22;  // 64 MiB of complex doubles at the most

bool usable(std::span<const double> s, std::span<const uint32_t> invalid, size_t i) {
  return std::isfinite(s[i]) && (i >= invalid.size() || invalid[i] == 0);
}

}  // namespace

double spectral_peak(std::span<const double> signal, std::span<const uint32_t> invalid,
                     double rate_hz) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (!(rate_hz > 0) || !std::isfinite(rate_hz)) return kNaN;
  double mean = 0;
  size_t valid = 0;
  for (size_t i = 0; i < signal.size(); ++i)
    if (usable(signal, invalid, i)) {
      mean += signal[i];
      ++valid;
    }
  if (valid < 4) return kNaN;
  mean /= static_cast<double>(valid);

  // Block averages: a rate of 8–16 Hz keeps the band (≤ 3 Hz) below Nyquist.
  const size_t step = rate_hz > 16 ? static_cast<size_t>(rate_hz / 8) : 1;
  const double rate = rate_hz / static_cast<double>(step);
  std::vector<double> x;
  x.reserve(signal.size() / step + 1);
  for (size_t i = 0; i < signal.size(); i += step) {
    double sum = 0;
    const size_t end = std::min(signal.size(), i + step);
    for (size_t k = i; k < end; ++k) sum += usable(signal, invalid, k) ? signal[k] - mean : 0.0;
    x.push_back(sum / static_cast<double>(end - i));
  }
  size_t padded = 1;
  while (padded < 8 * x.size() && padded < kMaxPadded) padded *= 2;
  if (padded < x.size()) padded = x.size();
  x.resize(padded, 0.0);

  Eigen::FFT<double> fft;
  std::vector<std::complex<double>> spectrum;
  fft.fwd(spectrum, x);
  const double df = rate / static_cast<double>(padded);
  const double top = std::min(kSpectralPeakMaxHz, rate / 2);
  double best = kNaN, best_mag = -1;
  for (size_t k = static_cast<size_t>(std::ceil(kSpectralPeakMinHz / df));
       k < spectrum.size() && static_cast<double>(k) * df <= top; ++k) {
    const double mag = std::norm(spectrum[k]);
    if (mag > best_mag) {
      best_mag = mag;
      best = static_cast<double>(k) * df;
    }
  }
  return best;
}

}  // namespace eit::cli
