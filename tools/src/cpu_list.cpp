// --cpus lists (cpu_list.hpp).
#include "cpu_list.hpp"

#include <unistd.h>

#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include "command_registry.hpp"

namespace eit::cli {

std::vector<int> parse_cpu_list(const std::string& text, const char* option) {
  const long n_cpus = sysconf(_SC_NPROCESSORS_ONLN);
  std::vector<int> cpus;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    int cpu = -1;
    try {
      size_t used = 0;
      cpu = std::stoi(item, &used);
      if (used != item.size()) cpu = -1;
    } catch (const std::exception&) {
    }
    if (cpu < 0 || cpu >= n_cpus)
      throw CommandError(fmt::format("{} '{}': '{}' is not a CPU number in 0..{}", option, text,
                                     item, n_cpus - 1));
    cpus.push_back(cpu);
    pos = comma + 1;
  }
  return cpus;
}

}  // namespace eit::cli
