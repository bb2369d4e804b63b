#include "existing_output.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "command_registry.hpp"

namespace eit::cli {

void refuse_existing_output(const std::string& path, bool force, const std::string& label,
                            const std::string& advice) {
  if (path.empty()) return;
  std::error_code ec;
  // Checked here, before any work, rather than found by the writer at its first write.
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
    throw CommandError(fmt::format("{}: the folder {} does not exist", label, folder.string()));
  // Only a file that holds data is protected: /dev/null, /dev/stdout or a FIFO are written to.
  if (force || !std::filesystem::is_regular_file(path, ec)) return;
  throw CommandError(
      fmt::format("{}: the file exists; give --force to replace it (or {})", label, advice));
}

void refuse_output_is_input(const std::string& output, const std::string& input,
                            const std::string& label, const std::string& input_label) {
  if (output.empty() || input.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool same = fs::weakly_canonical(fs::absolute(output), ec) ==
                        fs::weakly_canonical(fs::absolute(input), ec) ||
                    fs::equivalent(output, input, ec);
  // Only a regular file can be destroyed by writing over it (not /dev/stdout, a FIFO, a URI).
  if (same && (!fs::exists(input, ec) || fs::is_regular_file(input, ec)))
    throw CommandError(fmt::format("{}: that is {}, which this command reads; choose another name",
                                   label, input_label));
}

}  // namespace eit::cli
