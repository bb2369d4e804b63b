#include "element_laplacian.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "eit/recon/mesh_surface.hpp"

namespace eit::recon::detail {

Eigen::SparseMatrix<double> element_laplacian(const Mesh& mesh) {
  const int m = mesh.n_elems();
  if (mesh.dim() == 3) {  // tetrahedra sharing a face
    const std::vector<std::vector<int>> neighbours = tet_face_neighbours(mesh);
    std::vector<Eigen::Triplet<double>> t;
    t.reserve(static_cast<size_t>(m) * 5);
    for (int e = 0; e < m; ++e) {
      const auto& nb = neighbours[static_cast<size_t>(e)];
      t.emplace_back(e, e, static_cast<double>(nb.size()));
      for (int f : nb) t.emplace_back(e, f, -1.0);
    }
    Eigen::SparseMatrix<double> L(m, m);
    L.setFromTriplets(t.begin(), t.end());
    return L;
  }
  std::unordered_map<uint64_t, int> first_owner;
  first_owner.reserve(static_cast<size_t>(m) * 2);
  std::vector<Eigen::Triplet<double>> triplets;
  triplets.reserve(static_cast<size_t>(m) * 4);
  std::vector<double> degree(static_cast<size_t>(m), 0.0);
  for (int e = 0; e < m; ++e)
    for (int k = 0; k < 3; ++k) {
      const auto a = static_cast<uint64_t>(mesh.elements(e, k));
      const auto b = static_cast<uint64_t>(mesh.elements(e, (k + 1) % 3));
      const uint64_t key = (std::max(a, b) << 32) | std::min(a, b);
      const auto [it, inserted] = first_owner.emplace(key, e);
      if (inserted) continue;
      const int f = it->second;
      triplets.emplace_back(e, f, -1.0);
      triplets.emplace_back(f, e, -1.0);
      degree[static_cast<size_t>(e)] += 1;
      degree[static_cast<size_t>(f)] += 1;
    }
  for (int e = 0; e < m; ++e) triplets.emplace_back(e, e, degree[static_cast<size_t>(e)]);
  Eigen::SparseMatrix<double> L(m, m);
  L.setFromTriplets(triplets.begin(), triplets.end());
  return L;
}

}  // namespace eit::recon::detail
