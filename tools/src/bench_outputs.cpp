#include "bench_outputs.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "command_registry.hpp"
#include "existing_output.hpp"

namespace eit::cli {
namespace fs = std::filesystem;

namespace {

// Refuses an existing file without --force, then opens the file as its writer will, without
// changing it: an existing file in append mode, a new one created exclusively and removed again.
void check_writable(const char* option, const std::string& path, bool force) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw CommandError(fmt::format("{} '{}': is a folder, expected a file name", option, path));
  refuse_existing_output(path, force, fmt::format("{} {}", option, path));
  const bool existed = fs::exists(path, ec);
  FILE* f = std::fopen(path.c_str(), existed ? "ab" : "wbx");
  if (!f)
    throw CommandError(fmt::format("{} '{}': cannot be written: {} (checked before the first run)",
                                   option, path, std::strerror(errno)));
  std::fclose(f);
  if (!existed) std::remove(path.c_str());
}

}  // namespace

void check_bench_outputs(const BenchArgs& a) {
  const std::pair<const char*, const std::string*> outputs[] = {
      {"--json", &a.json}, {"--csv", &a.csv}, {"--svg", &a.svg}, {"--frames-csv", &a.frames_csv}};
  std::map<fs::path, const char*> seen;
  for (const auto& [option, path] : outputs) {
    if (path->empty()) continue;
    check_writable(option, *path, a.force);
    const fs::path key = fs::weakly_canonical(fs::absolute(*path));
    if (const auto [at, fresh] = seen.emplace(key, option); !fresh)
      throw CommandError(fmt::format("{} and {} both name '{}': one would overwrite the other",
                                     at->second, option, *path));
  }
}

}  // namespace eit::cli
