// libFuzzer target: recon's Model file reader (load_model: HDF5, validated, content hash checked)
// on arbitrary file contents. libhdf5 itself is not instrumented; our reading and validation is.
#include <cstddef>
#include <cstdint>
#include <exception>

#include <H5Epublic.h>

#include "eit/recon/model_file.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static eit::fuzz::InputFile file("fuzz.h5");
  static const bool quiet = [] { return H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0; }();
  (void)quiet;
  const auto& path = file.write(data, size);
  try {
    const eit::recon::Model m = eit::recon::load_model(path);
    if (static_cast<size_t>(m.H.rows()) != m.n_out() ||
        static_cast<size_t>(m.H.cols()) != m.n_meas())
      std::abort();
  } catch (const std::exception&) {
  }
  return 0;
}
