#pragma once
// A structured tetrahedral test mesh that needs neither Gmsh nor data files.
#include <array>
#include <utility>
#include <vector>

#include "eit/recon/mesh.hpp"

namespace eit::test {

// An n × n × n grid of unit cubes in [-1, 1]³, each cut into the 6 tetrahedra along its main
// diagonal (Kuhn: same orientation in every cube, so neighbouring faces match). 16 point
// electrodes on the side faces of the middle layer z = 0, ground at the centre node.
inline recon::Mesh cube_mesh(int n) {
  const int m = n + 1;
  const auto node = [m](int i, int j, int k) { return (k * m + j) * m + i; };
  recon::Mesh mesh;
  mesh.nodes.resize(m * m * m, 3);
  for (int k = 0; k < m; ++k)
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < m; ++i)
        mesh.nodes.row(node(i, j, k)) << -1.0 + 2.0 * i / n, -1.0 + 2.0 * j / n, -1.0 + 2.0 * k / n;
  constexpr std::array<std::array<int, 3>, 6> kOrders{
      {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};
  constexpr std::array<bool, 6> kOdd{false, true, true, false, false, true};  // parity of each
  mesh.elements.resize(6 * n * n * n, 4);
  int e = 0;
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        for (const auto& order : kOrders) {
          std::array<int, 3> at{i, j, k};
          mesh.elements(e, 0) = node(at[0], at[1], at[2]);
          for (int s = 0; s < 3; ++s) {
            ++at[static_cast<size_t>(order[static_cast<size_t>(s)])];
            mesh.elements(e, s + 1) = node(at[0], at[1], at[2]);
          }
          // Odd permutations give the mirrored tetrahedron: one orientation for all of them.
          if (kOdd[static_cast<size_t>(e % 6)]) std::swap(mesh.elements(e, 2), mesh.elements(e, 3));
          ++e;
        }
  // The 4n boundary nodes of the middle layer, walked around; 16 of them, evenly spaced.
  std::vector<int> ring;
  const int z = n / 2;
  for (int i = 0; i < n; ++i) ring.push_back(node(i, 0, z));
  for (int j = 0; j < n; ++j) ring.push_back(node(n, j, z));
  for (int i = n; i > 0; --i) ring.push_back(node(i, n, z));
  for (int j = n; j > 0; --j) ring.push_back(node(0, j, z));
  for (int l = 0; l < 16; ++l)
    mesh.electrode_nodes.push_back(ring[static_cast<size_t>(l) * ring.size() / 16]);
  mesh.ref_node = node(n / 2, n / 2, n / 2);
  return mesh;
}

}  // namespace eit::test
