// libFuzzer target: the npy recording reader on arbitrary file contents.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static eit::fuzz::InputFile file("fuzz.npy");
  eit::fuzz::open_and_read_all(file.write(data, size), "npy", eit::fuzz::protocol(), size);
  return 0;
}
