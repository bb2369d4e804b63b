#pragma once
// A 2-D complex64 .npy (frames × values, C order, version 1.0 header), the complex recording the
// CLI tests feed to `--complex interleaved`.
#include <complex>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace eit::test {

inline void write_complex_npy(const std::filesystem::path& p,
                              const std::vector<std::complex<float>>& v, size_t frames) {
  std::string header = fmt::format("{{'descr': '<c8', 'fortran_order': False, 'shape': ({}, {}), }}",
                                   frames, v.size() / frames);
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(p, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.put(static_cast<char>(len & 0xff));
  f.put(static_cast<char>(len >> 8));
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(v.data()),
          static_cast<std::streamsize>(v.size() * sizeof(std::complex<float>)));
}

}  // namespace eit::test
