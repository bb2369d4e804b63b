// libFuzzer target: the draeger recording reader on arbitrary file contents.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static eit::fuzz::InputFile file("fuzz.eit");
  eit::fuzz::open_and_read_all(file.write(data, size), "draeger", eit::fuzz::protocol(), size);
  return 0;
}
