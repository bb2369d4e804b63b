#include "default_setup.hpp"

#include <algorithm>
#include <variant>

#include <fmt/format.h>

#include "command_registry.hpp"
#include "eit/recon/layered_circle_mesh.hpp"
#include "eit/recon/mesh_generator.hpp"

namespace eit::cli {

recon::Mesh default_mesh(int n_electrodes) {
  if (!recon::mesh_generator_available()) return recon::layered_circle_mesh(n_electrodes, 8);
  recon::MeshOptions o;
  o.n_electrodes = n_electrodes;
  return recon::generate_mesh(o);
}

recon::Mesh phantom_mesh_for(const recon::Model& model) {
  // The phantom is a 2-D forward model; fed to a 3-D model it would give meaningless frames (or
  // index a 3-column node table as 2).
  const auto* mesh_geometry = std::get_if<recon::MeshGeometry>(&model.geometry);
  const auto* grid_geometry = std::get_if<recon::GridGeometry>(&model.geometry);
  if ((mesh_geometry && mesh_geometry->elements.cols() == 4) ||
      (grid_geometry && grid_geometry->nz > 1))
    throw CommandError(fmt::format(
        "model {} is 3-D and the synthetic phantoms are 2-D: give --source a recording or a "
        "device (or build a 2-D model)",
        model.id.substr(0, 16)));
  if (const auto* g = std::get_if<recon::MeshGeometry>(&model.geometry);
      g && static_cast<int>(g->electrode_nodes.size()) == model.protocol.n_electrodes) {
    recon::Mesh mesh;
    mesh.nodes = g->nodes;
    mesh.elements = g->elements;
    mesh.electrode_nodes = g->electrode_nodes;
    // pyEIT grounds the first node that is not an electrode.
    for (int i = 0; i < mesh.n_nodes(); ++i)
      if (std::find(mesh.electrode_nodes.begin(), mesh.electrode_nodes.end(), i) ==
          mesh.electrode_nodes.end()) {
        mesh.ref_node = i;
        break;
      }
    return mesh;
  }
  return default_mesh(model.protocol.n_electrodes);
}

}  // namespace eit::cli
