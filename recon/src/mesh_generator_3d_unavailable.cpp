// 3-D mesh generation in a build without Gmsh (EIT_HAVE_GMSH undefined): report it clearly.
#include <stdexcept>

#include "eit/recon/mesh_generator_3d.hpp"
#include "eit/recon/msh_reader.hpp"

namespace eit::recon {

Mesh generate_mesh_3d(const Mesh3dOptions&) {
  throw std::runtime_error(
      "mesh 3d: this eitstream was built without Gmsh (libgmsh-dev); import a tetrahedral mesh "
      "instead (csv:DIR)");
}

Mesh read_msh_tetrahedra(const std::filesystem::path& path) {
  throw std::runtime_error(
      "msh " + path.string() +
      ": tetrahedral .msh files are read by Gmsh, and this eitstream was built without it; "
      "import a tetrahedral mesh as CSV (csv:DIR) instead");
}

}  // namespace eit::recon
