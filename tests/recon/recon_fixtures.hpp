#pragma once
// Shared fixtures for the recon tests: the pyEIT h0=0.1 mesh, and a uniform 1→4 refinement of a
// mesh (midpoint subdivision keeps the polygonal domain exactly, so solutions on the refined
// meshes converge to the same continuum problem).
#include <map>
#include <optional>
#include <utility>

#include "eit/recon/mesh_io.hpp"
#include "test_data.hpp"

namespace eit::test {

inline std::optional<recon::Mesh> pyeit_mesh_h01() {
  const auto nodes = shared_data_file("pyeit/h0_0.1/nodes.csv");
  if (!nodes) return std::nullopt;
  return recon::load_mesh_csv_folder(nodes->parent_path());
}

inline recon::Mesh refine_uniform(const recon::Mesh& mesh) {
  recon::Mesh out = mesh;
  std::map<std::pair<int, int>, int> midpoint;
  std::vector<Eigen::RowVector2d> extra;
  const auto mid = [&](int a, int b) {
    const auto key = std::minmax(a, b);
    const auto it = midpoint.find(key);
    if (it != midpoint.end()) return it->second;
    const int index = mesh.n_nodes() + static_cast<int>(extra.size());
    extra.push_back(0.5 * (mesh.nodes.row(a) + mesh.nodes.row(b)));
    midpoint.emplace(key, index);
    return index;
  };
  out.elements.resize(mesh.n_elems() * 4, 3);
  for (int e = 0; e < mesh.n_elems(); ++e) {
    const int a = mesh.elements(e, 0), b = mesh.elements(e, 1), c = mesh.elements(e, 2);
    const int ab = mid(a, b), bc = mid(b, c), ca = mid(c, a);
    out.elements.row(4 * e + 0) << a, ab, ca;
    out.elements.row(4 * e + 1) << ab, b, bc;
    out.elements.row(4 * e + 2) << ca, bc, c;
    out.elements.row(4 * e + 3) << ab, bc, ca;
  }
  out.nodes.resize(mesh.n_nodes() + static_cast<int>(extra.size()), 2);
  out.nodes.topRows(mesh.n_nodes()) = mesh.nodes;
  for (size_t i = 0; i < extra.size(); ++i)
    out.nodes.row(mesh.n_nodes() + static_cast<int>(i)) = extra[i];
  out.electrode_patches.clear();
  return out;
}

}  // namespace eit::test
