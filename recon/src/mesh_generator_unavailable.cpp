// Mesh generation in a build without Gmsh (EIT_HAVE_GMSH undefined): report it clearly.
#include <stdexcept>

#include "eit/recon/mesh_generator.hpp"

namespace eit::recon {

bool mesh_generator_available() noexcept { return false; }

Mesh generate_mesh(const MeshOptions&) {
  throw std::runtime_error(
      "mesh: this eitstream was built without Gmsh (libgmsh-dev); import a mesh instead "
      "(csv:DIR or msh:FILE)");
}

}  // namespace eit::recon
