#pragma once
// The dominant frequency of the global impedance signal, a cross-check of the breathing rate
// that `eitstream indices` prints beside the detected breaths.
#include <cstdint>
#include <span>

namespace eit::cli {

// The search band: 3 to 180 breaths per minute.
inline constexpr double kSpectralPeakMinHz = 0.05;
inline constexpr double kSpectralPeakMaxHz = 3.0;

// Frequency (Hz) of the largest spectral magnitude of the mean-removed signal in
// [kSpectralPeakMinHz, min(kSpectralPeakMaxHz, Nyquist)]. Samples whose `invalid` entry is
// non-zero, or that are not finite, count as the mean (they add nothing). Fast rates are
// averaged down to 8–16 Hz first and the spectrum is zero-padded up to 8× for a finer grid, so
// a day of frames costs an FFT of a few million points. NaN when fewer than 4 valid samples or
// no frequency of the band fits the signal.
double spectral_peak(std::span<const double> signal, std::span<const uint32_t> invalid,
                     double rate_hz);

}  // namespace eit::cli
