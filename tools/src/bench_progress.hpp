#pragma once
// Progress lines of `eitstream bench` on stderr (main thread only): update() from the runner's
// 250 ms callback, done() after each run with its end-to-end summary.
#include <unistd.h>

#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "eit/bench/run_result.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/pipeline_stats.hpp"

namespace eit::cli {

// Prints a progress line at most every 250 ms on a terminal (overwritten), else every 5 s.
class Progress {
 public:
  Progress(bool quiet) : quiet_(quiet), tty_(::isatty(STDERR_FILENO) != 0) {}
  void start(size_t index, size_t count) {
    index_ = index;
    count_ = count;
    last_ns_ = eit::pipeline::now_ns();
  }
  void update(const eit::bench::RunConfig& c, const eit::pipeline::PipelineStats& s) {
    const int64_t now = eit::pipeline::now_ns();
    if (quiet_ || now - last_ns_ < (tty_ ? 250'000'000 : 5'000'000'000)) return;
    last_ns_ = now;
    const std::string line =
        fmt::format("run {}/{} {}: {}/{} frames in, {} out, {} dropped", index_ + 1, count_,
                    c.label(), s.frames_in, c.warmup + c.frames, s.frames_out, s.dropped());
    if (tty_)
      fmt::print(stderr, "\r{:<100}", line);
    else
      fmt::print(stderr, "{}\n", line);
    std::fflush(stderr);
    shown_ = true;
  }
  void done(const eit::bench::RunResult& r) {
    if (quiet_) return;
    if (tty_ && shown_) fmt::print(stderr, "\r{:<100}\r", "");
    const auto& e2e = r.end_to_end.summary;
    const auto* p99 = e2e.find("p99");
    fmt::print(stderr,
               "run {}/{} {}: {} frames, end to end p50 {:.1f} µs, p99 {}, {} dropped, {} lost\n",
               index_ + 1, count_, r.config.label(), r.measured, e2e.percentiles[0].value_ns * 1e-3,
               p99 && p99->quoted ? fmt::format("{:.1f} µs", p99->value_ns * 1e-3) : "—",
               r.not_published, r.not_received);
    if (!r.config.cpu_wake_hold.empty())
      fmt::print(stderr, "  cpu wake-up hold: {}\n", r.config.cpu_wake_hold);
    if (!r.config.cpu_keeper.empty()) fmt::print(stderr, "  zmq io cpu: {}\n", r.config.cpu_keeper);
    shown_ = false;
  }

 private:
  bool quiet_, tty_;
  bool shown_ = false;
  size_t index_ = 0, count_ = 0;
  int64_t last_ns_ = 0;
};

}  // namespace eit::cli
