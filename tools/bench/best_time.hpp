#pragma once
// Wall-clock and process-CPU timing for the recon benchmark programs (bench_recon, bench_recon3d):
// a stopwatch for both clocks, and the best (smallest) of each over repeated runs, printed as
// "wall cpu" seconds.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace eit::bench {

// Wall-clock and CPU time of the whole process (every thread) since construction.
class Stopwatch {
 public:
  Stopwatch() : wall0_(std::chrono::steady_clock::now()), cpu0_(process_cpu_seconds()) {}
  double wall() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
  }
  double cpu() const { return process_cpu_seconds() - cpu0_; }

 private:
  static double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
  std::chrono::steady_clock::time_point wall0_;
  double cpu0_;
};

struct BestTime {
  double wall = std::numeric_limits<double>::infinity(), cpu = wall;

  // Keeps the smaller of each time: the stopwatch's so far, or the best before.
  void keep(const Stopwatch& s) {
    cpu = std::min(cpu, s.cpu());
    wall = std::min(wall, s.wall());
  }
  // Times one run of `run`.
  void time(const std::function<void()>& run) {
    const Stopwatch s;
    run();
    keep(s);
  }
  std::string text() const { return fmt::format("{:.6f} {:.6f}", wall, cpu); }
};

}  // namespace eit::bench
