// libFuzzer target: the mat recording reader on arbitrary file contents.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static eit::fuzz::InputFile file("fuzz.mat");
  eit::fuzz::open_and_read_all(file.write(data, size), "mat", eit::fuzz::protocol(), size);
  return 0;
}
