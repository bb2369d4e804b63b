#pragma once
// What a .mat file must pass before libmatio opens it (private to eit_recon; used by
// mat_file.cpp). libmatio 1.5.23 allocates what a file's lengths and dimensions claim, so:
// - the header must say v5 (0x0100) or v7.3 (0x0200): libmatio reads anything else as MATLAB v4,
//   with unchecked lengths;
// - v5: every element must fit in what encloses it; a matrix's array flags, dimensions and name
//   must be the spec's types; a cell, struct or function-handle matrix must have room for one
//   8-byte tag per element it claims (libmatio allocates a pointer per element first); and each
//   compressed element is inflated (at most 1032× its size, zlib's limit, and 4 GiB) and walked
//   the same way, since libmatio reads those parts out of the inflated stream unchecked too;
// - v7.3: mat73_check.hpp.
// Throws std::runtime_error naming the file (`name`), the byte and what was found.
#include <cstdint>
#include <filesystem>
#include <string_view>

namespace eit::recon {

// zlib cannot expand data by more than about 1032:1; no variable is read beyond 4 GiB.
constexpr uint64_t kMatMaxInflation = 1032;
constexpr uint64_t kMatMaxVariableBytes = uint64_t(4) << 30;

void check_mat_file(const std::filesystem::path& path, std::string_view name);

}  // namespace eit::recon
