#include "bench_host_noise.hpp"

#include <cstdio>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "command_registry.hpp"

namespace eit::cli {

namespace {

// A positive number of seconds up to the limit, or CommandError.
double parse_seconds(const std::string& text) {
  const auto refuse = [&] {
    return CommandError(fmt::format(
        "--host-noise '{}': expected auto, off, or seconds greater than 0 and at most {:g}", text,
        kMaxHostNoiseSeconds));
  };
  size_t used = 0;
  double s = 0;
  try {
    s = std::stod(text, &used);
  } catch (const std::exception&) {
    throw refuse();
  }
  if (used != text.size() || !(s >= 0) || s > kMaxHostNoiseSeconds) throw refuse();
  return s;
}

}  // namespace

HostNoisePlan::HostNoisePlan(const std::string& choice, const eit::bench::CpuRequest& cpus) {
  if (choice == "off") {
    skipped_ = "--host-noise off";
    return;
  }
  const bool automatic = choice == "auto";
  seconds_ = automatic ? eit::bench::kDefaultHostNoiseSeconds : parse_seconds(choice);
  if (seconds_ == 0) {
    skipped_ = "--host-noise 0";
    return;
  }
  const std::vector<int> allowed = eit::bench::allowed_cpus();
  if (cpus.any()) {
    cpus_ = eit::bench::pinned_cpus_of(cpus, allowed);
    which_ = fmt::format("the CPUs --cpus {} pins ({})", cpus.text(), fmt::join(cpus_, ","));
  } else if (automatic) {
    skipped_ =
        "--host-noise auto probes the CPUs --cpus pins, and no --cpus was given; "
        "--host-noise SECONDS probes every allowed CPU";
  } else {
    cpus_ = allowed;
    which_ = fmt::format("every CPU this process may use ({})", fmt::join(cpus_, ","));
  }
}

eit::bench::HostNoise HostNoisePlan::run(bool quiet) const {
  eit::bench::HostNoise noise;
  if (!skipped_.empty()) {
    noise.skipped = skipped_;
    return noise;
  }
  if (!quiet) fmt::print(stderr, "host noise: spinning on {} for {:g} s\n", which_, seconds_);
  noise = eit::bench::probe_host_noise(cpus_, seconds_);
  noise.which = which_;
  return noise;
}

}  // namespace eit::cli
