// libFuzzer target: the mat recording reader on arbitrary file contents (MATLAB v5 to v7; inputs
// whose header says v7.3 are skipped, see says_mat73).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static eit::fuzz::InputFile file("fuzz.mat");
  if (eit::fuzz::says_mat73(data, size)) return -1;  // v7.3 is fuzz_mat73's
  eit::fuzz::open_and_read_all(file.write(data, size), "mat", eit::fuzz::protocol(), size);
  return 0;
}
