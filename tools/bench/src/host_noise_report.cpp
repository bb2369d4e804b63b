// The host-noise probe's block in the bench's table and its JSON (host_noise.hpp).
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eit/bench/host_noise.hpp"

namespace eit::bench {

std::string format_host_noise(const HostNoise& noise) {
  if (noise.skipped.empty() && noise.cpus.empty()) return {};  // a report that never asked
  if (!noise.skipped.empty()) return fmt::format("\nhost noise: not probed ({})\n", noise.skipped);
  std::string out = fmt::format(
      "\n── host noise: {}, one spinning thread on each, all at once, {:.1f} s\n"
      "   (a stall: the thread lost ≥ {} µs between two clock reads; stalls land on frames in "
      "flight)\n",
      noise.which, noise.seconds, kLostFromNs / 1000);
  out += fmt::format("  {:>4} {:>10} {:>10} {:>10} {:>10} {:>12} {:>10}\n", "CPU", "stalls/s",
                     "≥10 µs/s", "≥50 µs/s", "≥100 µs/s", "longest µs", "time lost");
  for (const auto& c : noise.cpus) {
    if (c.pin_error != 0) {
      out +=
          fmt::format("  {:>4} not pinned ({}): not measured\n", c.cpu, std::strerror(c.pin_error));
      continue;
    }
    const StallCounts& s = c.stalls;
    out +=
        fmt::format("  {:>4} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f} {:>12.1f} {:>8.2f} %\n", c.cpu,
                    s.per_second(s.lost_gaps), s.per_second(s.ge_10us), s.per_second(s.ge_50us),
                    s.per_second(s.ge_100us), s.longest_ns * 1e-3, 100 * s.lost_fraction());
  }
  return out;
}

nlohmann::json host_noise_json(const HostNoise& noise) {
  nlohmann::json j{{"seconds", noise.seconds},
                   {"which", noise.which},
                   {"lost_from_ns", kLostFromNs},
                   {"skipped", noise.skipped}};
  nlohmann::json cpus = nlohmann::json::array();
  for (const auto& c : noise.cpus) {
    const StallCounts& s = c.stalls;
    cpus.push_back(
        {{"cpu", c.cpu},
         {"pinned", c.pin_error == 0},
         {"outcome", c.pin_error == 0 ? std::string("pinned")
                                      : fmt::format("not pinned: {}", std::strerror(c.pin_error))},
         {"span_ns", s.span_ns},
         {"reads", s.reads},
         {"stalls", s.lost_gaps},
         {"stalls_ge_10us", s.ge_10us},
         {"stalls_ge_50us", s.ge_50us},
         {"stalls_ge_100us", s.ge_100us},
         {"longest_ns", s.longest_ns},
         {"lost_ns", s.lost_ns},
         {"lost_fraction", s.lost_fraction()}});
  }
  j["cpus"] = std::move(cpus);
  return j;
}

}  // namespace eit::bench
