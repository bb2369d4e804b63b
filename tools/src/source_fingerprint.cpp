#include "source_fingerprint.hpp"

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace eit::cli {

std::string source_fingerprint(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open the file", path.string()));
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buf[static_cast<size_t>(i)]);
      h *= 1099511628211ull;
    }
  }
  return fmt::format("{} fnv1a64:{:016x}", path.filename().string(), h);
}

}  // namespace eit::cli
