#pragma once
// Locating ../shared/data for tests. A test that needs a file calls shared_data_file(); when the
// file is absent it gets std::nullopt and a visible "SKIPPED: …" line is printed, never a pass.
#include <filesystem>
#include <optional>
#include <string_view>

namespace eit::test {

// The shared data folder: $EIT_SHARED_DATA if set, else <repo>/../shared/data.
std::filesystem::path shared_data_dir();
// The file under shared_data_dir(), or nullopt after printing why the caller skips.
std::optional<std::filesystem::path> shared_data_file(std::string_view relative);
// Prints "SKIPPED: <test>: <why>" to stderr and stdout so it shows in CTest logs.
void report_skip(std::string_view what, std::string_view why);

}  // namespace eit::test
