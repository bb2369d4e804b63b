#include "test_data.hpp"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace eit::test {

std::filesystem::path shared_data_dir() {
  if (const char* env = std::getenv("EIT_SHARED_DATA"); env && *env) return env;
  return EIT_SHARED_DATA_DEFAULT;
}

void report_skip(std::string_view what, std::string_view why) {
  const std::string line = fmt::format("SKIPPED: {}: {}\n", what, why);
  std::fputs(line.c_str(), stdout);
  std::fputs(line.c_str(), stderr);
}

std::optional<std::filesystem::path> shared_data_file(std::string_view relative) {
  const auto path = shared_data_dir() / relative;
  if (std::filesystem::exists(path)) return path;
  report_skip(relative, fmt::format("{} is absent (set EIT_SHARED_DATA to the shared data folder)",
                                    path.string()));
  return std::nullopt;
}

}  // namespace eit::test
