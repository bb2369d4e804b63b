// 3-D mesh generation in a build without Gmsh (EIT_HAVE_GMSH undefined): report it clearly.
#include <stdexcept>

#include "eit/recon/mesh_generator_3d.hpp"

namespace eit::recon {

std::vector<double> ring_heights(const Mesh3dOptions& o) {
  if (!o.ring_z.empty()) return o.ring_z;
  std::vector<double> z;
  for (int r = 0; r < o.n_rings; ++r) z.push_back(o.height * (r + 1) / (o.n_rings + 1));
  return z;
}

Mesh generate_mesh_3d(const Mesh3dOptions&) {
  throw std::runtime_error(
      "mesh 3d: this eitstream was built without Gmsh (libgmsh-dev); import a tetrahedral mesh "
      "instead (csv:DIR)");
}

}  // namespace eit::recon
