#pragma once
// How a recording file is named in an image file's `source` attribute: its file name and an
// FNV-1a 64-bit hash of its content ("P04P-1016.get fnv1a64:3b1f…"), so an image file says
// exactly which recording it came from. Set-up only: reads the whole file; throws naming it.
#include <filesystem>
#include <string>

namespace eit::cli {

std::string source_fingerprint(const std::filesystem::path& path);

}  // namespace eit::cli
