#include "eit/recon/mesh_surface.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>
#include <Eigen/Geometry>

namespace eit::recon {
namespace {

// Faces of tetrahedron (0, 1, 2, 3) with the local node each one is opposite to.
constexpr int kFace[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};

struct FaceKey {
  std::array<int, 3> v;
  bool operator==(const FaceKey&) const = default;
};
struct FaceHash {
  size_t operator()(const FaceKey& k) const noexcept {
    uint64_t h = 1469598103934665603ull;
    for (int x : k.v) h = (h ^ static_cast<uint64_t>(x)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};
FaceKey sorted_face(int a, int b, int c) {
  std::array<int, 3> v{a, b, c};
  std::sort(v.begin(), v.end());
  return {v};
}

void require_3d(const Mesh& mesh, const char* what) {
  if (mesh.dim() != 3)
    throw std::invalid_argument(fmt::format("{}: needs a tetrahedral mesh (4 nodes per element), "
                                            "found {} nodes per element",
                                            what, mesh.elements.cols()));
}

}  // namespace

double tet_six_volume(const Mesh& mesh, int e) {
  const Eigen::Vector3d p0 = mesh.nodes.row(mesh.elements(e, 0)).transpose();
  const Eigen::Vector3d e1 = mesh.nodes.row(mesh.elements(e, 1)).transpose() - p0;
  const Eigen::Vector3d e2 = mesh.nodes.row(mesh.elements(e, 2)).transpose() - p0;
  const Eigen::Vector3d e3 = mesh.nodes.row(mesh.elements(e, 3)).transpose() - p0;
  return e1.dot(e2.cross(e3));
}

double tet_quality(const Mesh& mesh, int e) {
  double sum = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < i; ++j)
      sum += (mesh.nodes.row(mesh.elements(e, i)) - mesh.nodes.row(mesh.elements(e, j)))
                 .squaredNorm();
  const double l_rms = std::sqrt(sum / 6.0);
  if (!(l_rms > 0)) return 0.0;
  return std::sqrt(2.0) * std::abs(tet_six_volume(mesh, e)) / (l_rms * l_rms * l_rms);
}

std::vector<SurfaceFace> surface_faces(const Mesh& mesh) {
  require_3d(mesh, "surface_faces");
  struct Use {
    int count = 0;
    SurfaceFace first{};
  };
  std::unordered_map<FaceKey, Use, FaceHash> uses;
  uses.reserve(static_cast<size_t>(mesh.n_elems()) * 3);
  for (int e = 0; e < mesh.n_elems(); ++e) {
    const bool flip = tet_six_volume(mesh, e) < 0;
    for (const auto& f : kFace) {
      int a = mesh.elements(e, f[0]), b = mesh.elements(e, f[1]), c = mesh.elements(e, f[2]);
      if (flip) std::swap(b, c);
      Use& use = uses[sorted_face(a, b, c)];
      if (++use.count > 2)
        throw std::invalid_argument(fmt::format(
            "mesh: face ({}, {}, {}) of element {} belongs to more than two tetrahedra", a, b, c,
            e));
      if (use.count == 1) use.first = {a, b, c, e};
    }
  }
  std::vector<SurfaceFace> faces;
  for (const auto& [key, use] : uses)
    if (use.count == 1) faces.push_back(use.first);
  std::sort(faces.begin(), faces.end(), [](const SurfaceFace& x, const SurfaceFace& y) {
    return x.element != y.element ? x.element < y.element
                                  : std::tie(x.a, x.b, x.c) < std::tie(y.a, y.b, y.c);
  });
  return faces;
}

std::vector<int> surface_nodes(const Mesh& mesh) {
  std::vector<int> nodes;
  for (const SurfaceFace& f : surface_faces(mesh)) {
    nodes.push_back(f.a);
    nodes.push_back(f.b);
    nodes.push_back(f.c);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

std::vector<std::vector<int>> tet_face_neighbours(const Mesh& mesh) {
  require_3d(mesh, "tet_face_neighbours");
  std::unordered_map<FaceKey, int, FaceHash> first_owner;
  first_owner.reserve(static_cast<size_t>(mesh.n_elems()) * 3);
  std::vector<std::vector<int>> out(static_cast<size_t>(mesh.n_elems()));
  for (int e = 0; e < mesh.n_elems(); ++e)
    for (const auto& f : kFace) {
      const FaceKey key =
          sorted_face(mesh.elements(e, f[0]), mesh.elements(e, f[1]), mesh.elements(e, f[2]));
      const auto [it, inserted] = first_owner.emplace(key, e);
      if (inserted) continue;
      out[static_cast<size_t>(e)].push_back(it->second);
      out[static_cast<size_t>(it->second)].push_back(e);
    }
  return out;
}

std::vector<int> disc_patch(const Mesh& mesh, int node, double radius) {
  const Eigen::RowVectorXd c = mesh.nodes.row(node);
  std::vector<int> out;
  for (const SurfaceFace& f : surface_faces(mesh)) {
    const Eigen::RowVectorXd centroid =
        (mesh.nodes.row(f.a) + mesh.nodes.row(f.b) + mesh.nodes.row(f.c)) / 3.0;
    if ((centroid - c).norm() <= radius) out.insert(out.end(), {f.a, f.b, f.c});
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace eit::recon
