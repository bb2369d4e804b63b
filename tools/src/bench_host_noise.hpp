#pragma once
// --host-noise of `eitstream bench`: whether and where to run the host-noise probe
// (eit/bench/host_noise.hpp) before the first run. auto probes the CPUs --cpus pins for
// kDefaultHostNoiseSeconds, and nothing without --cpus (unpinned runs move between CPUs, so no
// CPU's stalls are theirs); SECONDS probes for that long (the pinned CPUs, or every allowed CPU
// without --cpus); off or 0 skips it. Main thread only.
#include <string>

#include "eit/bench/cpu_pinning.hpp"
#include "eit/bench/host_noise.hpp"

namespace eit::cli {

inline constexpr double kMaxHostNoiseSeconds = 60;

class HostNoisePlan {
 public:
  // Checks `choice` (auto, off, or seconds in (0, kMaxHostNoiseSeconds]; else CommandError naming
  // the option and the value) and picks the CPUs.
  HostNoisePlan(const std::string& choice, const eit::bench::CpuRequest& cpus);
  // Probes (a line on stderr first unless quiet), or says why not.
  eit::bench::HostNoise run(bool quiet) const;

 private:
  double seconds_ = 0;
  std::vector<int> cpus_;
  std::string which_, skipped_;
};

}  // namespace eit::cli
