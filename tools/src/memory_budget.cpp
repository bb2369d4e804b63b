// Up-front memory checks for set-up steps (memory_budget.hpp).
#include "memory_budget.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "command_registry.hpp"

namespace eit::cli {

uint64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return 0;
}

void check_fits_in_memory(double bytes, const std::string& what, const std::string& how,
                          const std::string& advice) {
  const uint64_t available = available_memory_bytes();
  if (available == 0 || bytes <= static_cast<double>(available)) return;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  throw CommandError(
      fmt::format("{} needs {:.1f} GiB ({}), this machine has {:.1f} GiB available; {}", what,
                  bytes / kGiB, how, static_cast<double>(available) / kGiB, advice));
}

}  // namespace eit::cli
