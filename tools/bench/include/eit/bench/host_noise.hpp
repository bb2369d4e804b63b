#pragma once
// The host-noise probe of `eitstream bench --host-noise`: how often the CPUs a run pins are taken
// away from a thread that never sleeps (interrupts, other tasks, a hypervisor that deschedules the
// vCPU). One thread per CPU, pinned, reads CLOCK_MONOTONIC in a tight loop, every CPU at once (as
// spin mode's stages and subscriber spin together); a gap between two consecutive reads of at
// least kLostFromNs is time the thread did not have. A stall lands on whatever frame is in flight
// on that CPU, so these stalls are the floor under a run's tail percentiles, as the bare ZeroMQ
// reference is the floor under its hop. Runs before the first run, with nothing else running.
// Set-up only: allocates and starts threads (std::system_error when it cannot); a CPU it cannot
// pin is reported, never thrown.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "eit/bench/cpu_pinning.hpp"

namespace eit::bench {

inline constexpr int64_t kLostFromNs = 2'000;  // shorter gaps are the loop itself (≈ 20-60 ns)
inline constexpr double kDefaultHostNoiseSeconds = 1.0;

// The stalls one probing thread saw. add_gap() takes every gap between consecutive clock reads.
struct StallCounts {
  uint64_t reads = 0;
  uint64_t lost_gaps = 0;  // gaps ≥ kLostFromNs
  uint64_t ge_10us = 0, ge_50us = 0, ge_100us = 0;
  int64_t longest_ns = 0;
  int64_t lost_ns = 0;  // sum of the gaps ≥ kLostFromNs
  int64_t span_ns = 0;  // first read to last
  void add_gap(int64_t gap_ns) noexcept;
  double lost_fraction() const noexcept { return span_ns > 0 ? double(lost_ns) / span_ns : 0; }
  double per_second(uint64_t count) const noexcept {
    return span_ns > 0 ? count * 1e9 / double(span_ns) : 0;
  }
};

struct CpuNoise {
  int cpu = -1;
  int pin_error = 0;  // as pin_this_thread(): 0 pinned (else nothing was measured on it)
  StallCounts stalls;
};

struct HostNoise {
  double seconds = 0;          // asked for, per CPU (all CPUs at once)
  std::string which;           // how the CPUs were chosen, in words
  std::vector<CpuNoise> cpus;  // ascending CPU numbers
  std::string skipped;         // non-empty: no probe ran, and why
};

// Spins one pinned thread per CPU of `cpus` for `seconds`, all at once.
HostNoise probe_host_noise(const std::vector<int>& cpus, double seconds);

// The CPUs a bench's runs pin under `request`: its list (each once), or for auto those it gives
// the largest layout's threads (source, subscriber, reconstructor, sink); empty when nothing is
// pinned. `allowed`: allowed_cpus().
std::vector<int> pinned_cpus_of(const CpuRequest& request, const std::vector<int>& allowed);

// The block the bench prints after its runs ("" when skipped with no reason to show).
std::string format_host_noise(const HostNoise& noise);
nlohmann::json host_noise_json(const HostNoise& noise);

}  // namespace eit::bench
