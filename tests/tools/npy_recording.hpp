#pragma once
// A small recording for CLI tests: `frames` × 208 float32 values near 1 in a .npy file, the
// built-in model's order, optionally one NaN (value 5 of frame `nan_frame`).
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

#include "eit/recon/npy_header.hpp"

namespace eit::test {

inline std::filesystem::path write_npy_recording(const std::filesystem::path& path, size_t frames,
                                                 size_t nan_frame = SIZE_MAX) {
  std::ofstream out(path, std::ios::binary);
  const std::vector<uint64_t> shape{frames, 208};
  out << recon::npy_float32_header(shape);
  for (size_t f = 0; f < frames; ++f)
    for (size_t i = 0; i < 208; ++i) {
      float v = 1.0f + 0.01f * static_cast<float>(std::sin(0.3 * static_cast<double>(f) + i));
      if (f == nan_frame && i == 5) v = std::numeric_limits<float>::quiet_NaN();
      out.write(reinterpret_cast<const char*>(&v), 4);
    }
  return path;
}

}  // namespace eit::test
