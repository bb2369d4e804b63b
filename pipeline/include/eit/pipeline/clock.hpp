#pragma once
// One clock for every timestamp in eitstream: CLOCK_MONOTONIC in nanoseconds. It is shared by all
// processes of one host, so a subscriber in another process can measure end-to-end latency.
#include <cstdint>
#include <ctime>

namespace eit::pipeline {

inline int64_t now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Wall-clock time (CLOCK_REALTIME) in ns since the Unix epoch, for headers that leave the host.
inline int64_t wall_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace eit::pipeline
