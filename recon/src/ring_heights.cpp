// The ring heights of a 3-D mesh (mesh_generator_3d.hpp): in eit_recon and in the Gmsh module.
#include "eit/recon/mesh_generator_3d.hpp"

namespace eit::recon {

std::vector<double> ring_heights(const Mesh3dOptions& o) {
  if (!o.ring_z.empty()) return o.ring_z;
  std::vector<double> z;
  for (int r = 0; r < o.n_rings; ++r) z.push_back(o.height * (r + 1) / (o.n_rings + 1));
  return z;
}

}  // namespace eit::recon
