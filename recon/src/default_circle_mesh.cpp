#include "eit/recon/default_circle_mesh.hpp"

#include <variant>

#include "default_circle_mesh_data.hpp"
#include "eit/recon/mesh_boundary.hpp"

namespace eit::recon {

Mesh default_circle_mesh() {
  using namespace detail;
  Mesh mesh;
  mesh.nodes.resize(kDefaultMeshNodeCount, 2);
  for (int i = 0; i < kDefaultMeshNodeCount; ++i)
    mesh.nodes.row(i) << kDefaultMeshNodes[i][0], kDefaultMeshNodes[i][1];
  mesh.elements.resize(kDefaultMeshElementCount, 3);
  for (int e = 0; e < kDefaultMeshElementCount; ++e)
    mesh.elements.row(e) << kDefaultMeshElements[e][0], kDefaultMeshElements[e][1],
        kDefaultMeshElements[e][2];
  mesh.electrode_nodes.assign(kDefaultMeshElectrodes,
                              kDefaultMeshElectrodes + kDefaultMeshElectrodeCount);
  mesh.ref_node = pyeit_ref_node(mesh.electrode_nodes);
  return mesh;
}

bool is_default_circle_mesh(const MeshOptions& o) noexcept {
  const auto* circle = std::get_if<CircleOutline>(&o.outline);
  return circle && circle->radius == 1.0 && o.n_electrodes == 16 && o.h0 == 0.1 &&
         o.electrode_width == 0.0 && o.save_msh.empty();
}

}  // namespace eit::recon
