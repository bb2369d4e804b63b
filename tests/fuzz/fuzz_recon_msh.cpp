// libFuzzer target: recon's Gmsh .msh reader (formats 2.2 and 4.1, ASCII and binary) on arbitrary
// file contents; a mesh it returns has passed check_mesh, so its indices must be in range.
#include <cstddef>
#include <cstdint>
#include <exception>

#include "eit/recon/msh_reader.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static eit::fuzz::InputFile file("fuzz.msh");
  const auto& path = file.write(data, size);
  for (int electrodes : {0, 16}) {  // from physical groups, or placed at pyEIT's angles
    try {
      const eit::recon::Mesh m = eit::recon::read_msh(path, {electrodes});
      for (int e = 0; e < m.n_elems(); ++e)
        for (int k = 0; k < m.nodes_per_element(); ++k)
          if (m.elements(e, k) < 0 || m.elements(e, k) >= m.n_nodes()) std::abort();
    } catch (const std::exception&) {
    }
  }
  return 0;
}
