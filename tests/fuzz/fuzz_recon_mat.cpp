// libFuzzer target: recon's .mat matrix import (read_mat_variable through the shared hardened
// reader) on arbitrary file contents (MATLAB v5 to v7), by name and by "the only numeric variable".
#include <cstddef>
#include <cstdint>
#include <exception>

#include "eit/recon/array_file.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static eit::fuzz::InputFile file("fuzz.mat");
  if (eit::fuzz::says_mat73(data, size)) return -1;  // v7.3 is fuzz_mat73's
  const auto& path = file.write(data, size);
  for (const char* name : {"", "v"}) {
    try {
      const eit::recon::DenseArray a = eit::recon::read_mat_variable(path, name);
      if (a.shape.size() != 2 || a.shape[0] * a.shape[1] != a.size()) std::abort();
    } catch (const std::exception&) {
    }
  }
  return 0;
}
