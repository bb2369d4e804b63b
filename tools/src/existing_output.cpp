#include "existing_output.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "command_registry.hpp"

namespace eit::cli {

void refuse_existing_output(const std::string& path, bool force, const std::string& label,
                            const std::string& advice) {
  std::error_code ec;
  if (force || path.empty() || !std::filesystem::exists(path, ec)) return;
  throw CommandError(
      fmt::format("{}: the file exists; give --force to replace it (or {})", label, advice));
}

}  // namespace eit::cli
