#include "source_watchdog.hpp"

#include <fmt/format.h>

namespace eit::cli {

SourceWatchdog::SourceWatchdog(std::string source, double timeout_s, int64_t start_ns)
    : source_(std::move(source)),
      timeout_ns_(timeout_s > 0 ? static_cast<int64_t>(timeout_s * 1e9) : 0),
      start_ns_(start_ns) {}

std::string SourceWatchdog::why(const pipeline::SourceStats& s) const {
  std::string out;
  if (s.bad_frames) out += fmt::format("{} frames rejected", s.bad_frames);
  if (s.reordered)
    out += fmt::format("{}{} frames dropped by seq (repeated or behind)", out.empty() ? "" : ", ",
                       s.reordered);
  if (s.bytes_skipped)
    out += fmt::format("{}{} bytes skipped", out.empty() ? "" : ", ", s.bytes_skipped);
  if (s.reconnects) out += fmt::format("{}{} reconnects", out.empty() ? "" : ", ", s.reconnects);
  if (!s.last_error.empty())
    out += fmt::format("{}last problem: {}", out.empty() ? "" : "; ", s.last_error);
  return out.empty() ? "nothing received" : out;
}

std::optional<std::string> SourceWatchdog::check(const pipeline::SourceStats& s, uint64_t frames_in,
                                                 int64_t now_ns) {
  if (frames_in > frames_seen_) {
    frames_seen_ = frames_in;
    bad_since_ns_ = -1;
  } else if ((s.bad_frames > bad_seen_ || s.reordered > refused_seen_) && bad_since_ns_ < 0) {
    bad_since_ns_ = now_ns;  // a frame refused for its seq is as useless as a rejected one
  }
  bad_seen_ = s.bad_frames;
  refused_seen_ = s.reordered;
  if (timeout_ns_ <= 0) return std::nullopt;
  const double t = static_cast<double>(timeout_ns_) / 1e9;
  if (frames_seen_ == 0 && now_ns - start_ns_ >= timeout_ns_)
    return fmt::format("no valid frame from {} in {:g} s ({})", source_, t, why(s));
  // From the first rejected frame, not the last valid one: after an outage longer than the
  // timeout, one damaged frame on reconnecting is not "only rejected frames for that long".
  if (frames_seen_ > 0 && bad_since_ns_ >= 0 && now_ns - bad_since_ns_ >= timeout_ns_)
    return fmt::format("only rejected frames from {} for {:g} s after {} valid ones ({})", source_,
                       t, frames_seen_, why(s));
  return std::nullopt;
}

std::optional<std::string> SourceWatchdog::at_end(const pipeline::SourceStats& s,
                                                  uint64_t frames_in) const {
  if (frames_in > 0) return std::nullopt;
  return fmt::format("no valid frame from {} ({})", source_, why(s));
}

}  // namespace eit::cli
