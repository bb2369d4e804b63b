#include "progress_report.hpp"

#include <algorithm>
#include <cstdio>

#include <unistd.h>

#include <fmt/format.h>

#include "eit/pipeline/clock.hpp"

namespace eit::cli {
namespace {
constexpr int64_t kTtyPeriodNs = 100'000'000;
constexpr int64_t kPlainPeriodNs = 5'000'000'000;
}  // namespace

ProgressReport::ProgressReport(std::string label, uint64_t total, bool quiet)
    : label_(std::move(label)),
      total_(total),
      quiet_(quiet),
      tty_(isatty(fileno(stderr)) != 0),
      start_ns_(pipeline::now_ns()),
      next_ns_(start_ns_ + (tty_ ? kTtyPeriodNs : kPlainPeriodNs)) {}

std::string ProgressReport::line(const std::string& label, uint64_t done, uint64_t total,
                                 double elapsed_s, bool bar) {
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0.0;
  std::string s = label + " ";
  if (bar && total > 0) {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * std::min(1.0, double(done) / double(total)));
    std::string cells(kWidth, '.');
    std::fill_n(cells.begin(), filled, '#');
    s += fmt::format("[{}] ", cells);
  }
  s += total > 0 ? fmt::format("{}/{} frames", done, total) : fmt::format("{} frames", done);
  s += rate >= 1000 ? fmt::format("  {:.1f} k frames/s", rate / 1000)
                    : fmt::format("  {:.1f} frames/s", rate);
  if (total > 0 && rate > 0 && done < total)
    s += fmt::format("  ETA {:.1f} s", static_cast<double>(total - done) / rate);
  return s;
}

void ProgressReport::update(uint64_t done) {
  if (quiet_) return;
  const int64_t now = pipeline::now_ns();
  if (now < next_ns_) return;
  next_ns_ = now + (tty_ ? kTtyPeriodNs : kPlainPeriodNs);
  const std::string s = line(label_, done, total_, (now - start_ns_) / 1e9, tty_);
  if (tty_)
    fmt::print(stderr, "\r{}\x1b[K", s);
  else
    fmt::print(stderr, "{}\n", s);
  std::fflush(stderr);
}

void ProgressReport::finish(uint64_t done) {
  if (quiet_) return;
  const std::string s = line(label_, done, total_, (pipeline::now_ns() - start_ns_) / 1e9, tty_);
  if (tty_)
    fmt::print(stderr, "\r{}\x1b[K\n", s);
  else
    fmt::print(stderr, "{}\n", s);
  std::fflush(stderr);
}

}  // namespace eit::cli
