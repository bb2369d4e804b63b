#pragma once
// Test helper shared by the 3-D CEM and mesher tests: the contact area of an electrode patch.
#include <set>
#include <vector>

#include <Eigen/Geometry>

#include "eit/recon/mesh.hpp"
#include "eit/recon/mesh_surface.hpp"

namespace eit::test {

// Area of the surface triangles whose three nodes are all in the patch (the CEM contact).
inline double patch_area(const recon::Mesh& mesh, const std::vector<int>& patch) {
  const std::set<int> in(patch.begin(), patch.end());
  double area = 0;
  for (const recon::SurfaceFace& f : recon::surface_faces(mesh)) {
    if (!in.count(f.a) || !in.count(f.b) || !in.count(f.c)) continue;
    const Eigen::Vector3d a = mesh.nodes.row(f.a), b = mesh.nodes.row(f.b), c = mesh.nodes.row(f.c);
    area += 0.5 * (b - a).cross(c - a).norm();
  }
  return area;
}

}  // namespace eit::test
