#pragma once
// SourceWatchdog: tells `eitstream run` when a live source has failed for good, so the run ends
// with a non-zero exit and the reason instead of printing "0.0 frames/s" forever (or exiting 0):
//   - no valid frame within `timeout_s` of the start: a refused or silent connection, or a device
//     whose every frame is rejected (a device/model mismatch: 208 values against an 896-value
//     model);
//   - after valid frames, only rejected frames for `timeout_s`, counted from the first rejected
//     one (the device was reconfigured; an outage before it does not count); frames refused for
//     their seq (repeated or behind: a device whose seq never advances) count as rejected;
//   - at the end of the run, a source that never yielded a valid frame (e.g. stopped by
//     --duration or Ctrl-C before the timeout).
// Silence after valid frames is not a failure: the transport reconnects and the status line
// says so. The reason names the source and its last problem (the transport's last error, why
// frames were rejected). timeout_s <= 0 turns the checks during the run off (not the one at the
// end). Single-threaded (the run's status loop); allocates only to build a reason.
#include <cstdint>
#include <optional>
#include <string>

#include "eit/pipeline/source.hpp"

namespace eit::cli {

class SourceWatchdog {
 public:
  SourceWatchdog(std::string source, double timeout_s, int64_t start_ns);

  // During the run: a reason when the source has failed (then the run should stop).
  std::optional<std::string> check(const pipeline::SourceStats& stats, uint64_t frames_in,
                                   int64_t now_ns);
  // After the run: a reason when the source never yielded a valid frame.
  std::optional<std::string> at_end(const pipeline::SourceStats& stats, uint64_t frames_in) const;

 private:
  std::string why(const pipeline::SourceStats& stats) const;

  std::string source_;
  int64_t timeout_ns_;
  int64_t start_ns_;
  uint64_t frames_seen_ = 0, bad_seen_ = 0, refused_seen_ = 0;
  int64_t bad_since_ns_ = -1;  // first rejected frame since the last valid one; -1: none
};

}  // namespace eit::cli
