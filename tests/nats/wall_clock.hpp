#pragma once
// Wall-clock times for replays from a time (since=T). libnats 3.4.1 writes a start time's
// nanoseconds as ".%ld" without zero padding (.085 s goes out as .85 s), so a T early in a second
// is the case to cover: tests of since=T take their T here, every run rather than one in ten.
#include <chrono>
#include <cstdint>
#include <thread>

namespace eit::test {

inline double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Waits (at most a second) until the fraction of the current second is in [lo_ns, hi_ns) and
// returns that time in seconds since the epoch.
inline double epoch_seconds_at_fraction(int64_t lo_ns, int64_t hi_ns) {
  using namespace std::chrono;
  while (true) {
    const auto now = system_clock::now().time_since_epoch();
    const int64_t ns = duration_cast<nanoseconds>(now).count() % 1'000'000'000;
    if (ns >= lo_ns && ns < hi_ns) return duration<double>(now).count();
    std::this_thread::sleep_for(nanoseconds(ns < lo_ns ? lo_ns - ns : 1'000'000'000 + lo_ns - ns));
  }
}

// A T whose nanoseconds have eight digits: libnats alone would send it 0.72 to 0.86 s later.
inline double epoch_seconds_early_in_a_second() {
  return epoch_seconds_at_fraction(80'000'000, 95'000'000);
}

}  // namespace eit::test
