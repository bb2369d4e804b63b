#pragma once
// Progress of a long batch job (`eitstream reconstruct`): on a terminal a bar redrawn in place
// ("[#####.....] 51200/220000 frames  84.1 k/s  ETA 2.0 s"), otherwise a plain line every few
// seconds so logs stay readable. Single thread; writes to stderr.
#include <cstdint>
#include <string>

namespace eit::cli {

class ProgressReport {
 public:
  // total: frames expected (0: unknown); label: what is being processed (a file name).
  ProgressReport(std::string label, uint64_t total, bool quiet);
  void update(uint64_t done);  // cheap: redraws at most ~10×/s (terminal) or every 5 s (plain)
  void finish(uint64_t done);  // the final line

  // The text of one progress line (for tests and the plain mode).
  static std::string line(const std::string& label, uint64_t done, uint64_t total, double elapsed_s,
                          bool bar);

 private:
  std::string label_;
  uint64_t total_;
  bool quiet_, tty_;
  int64_t start_ns_, next_ns_;
};

}  // namespace eit::cli
