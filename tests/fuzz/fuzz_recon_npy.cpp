// libFuzzer target: recon's .npy matrix reader (read_npy, through the shared header parser) on
// arbitrary file contents. A set-up error is the expected answer; a crash, a leak, a hang or an
// allocation beyond -rss_limit_mb is a bug.
#include <cstddef>
#include <cstdint>
#include <exception>

#include "eit/recon/array_file.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static eit::fuzz::InputFile file("fuzz.npy");
  const auto& path = file.write(data, size);
  try {
    const eit::recon::DenseArray a = eit::recon::read_npy(path);
    size_t count = 1;
    for (size_t d : a.shape) count *= d;
    if (count != a.size() || (a.is_complex() && a.imag.size() != a.size())) std::abort();
    if (a.size() > size) std::abort();  // never more values than the bytes hold (int8: 1 each)
  } catch (const std::exception&) {
  }
  return 0;
}
