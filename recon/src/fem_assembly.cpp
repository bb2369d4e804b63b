#include "fem_assembly.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <Eigen/Geometry>

#include "eit/recon/mesh_boundary.hpp"

namespace eit::recon::detail {

ElementGeometry element_geometry(const Mesh& mesh) {
  const int m = mesh.n_elems();
  const int d = mesh.dim();
  ElementGeometry g;
  g.dim = d;
  g.grad.assign(static_cast<size_t>(d), Eigen::MatrixXd(m, d + 1));
  g.measure.resize(m);
  g.weight.resize(m);
  if (d == 2) {
    for (int e = 0; e < m; ++e) {
      const int n[3] = {mesh.elements(e, 0), mesh.elements(e, 1), mesh.elements(e, 2)};
      for (int i = 0; i < 3; ++i) {
        const int from = n[(i + 1) % 3], to = n[(i + 2) % 3];
        g.grad[0](e, i) = mesh.nodes(to, 0) - mesh.nodes(from, 0);
        g.grad[1](e, i) = mesh.nodes(to, 1) - mesh.nodes(from, 1);
      }
      g.measure(e) = 0.5 * (g.grad[0](e, 0) * g.grad[1](e, 1) - g.grad[1](e, 0) * g.grad[0](e, 1));
      g.weight(e) = 1.0 / (4.0 * g.measure(e));
    }
    return g;
  }
  for (int e = 0; e < m; ++e) {
    Eigen::Vector3d p[4];
    for (int i = 0; i < 4; ++i) p[i] = mesh.nodes.row(mesh.elements(e, i)).transpose();
    const Eigen::Vector3d e1 = p[1] - p[0], e2 = p[2] - p[0], e3 = p[3] - p[0];
    const double six_v = e1.dot(e2.cross(e3));
    // 6V ∇φ_i for i = 1, 2, 3 are the cofactor rows (e2×e3, e3×e1, e1×e2); ∇φ_0 = −Σ.
    const Eigen::Vector3d a1 = e2.cross(e3), a2 = e3.cross(e1), a3 = e1.cross(e2);
    const Eigen::Vector3d a0 = -(a1 + a2 + a3);
    const Eigen::Vector3d* a[4] = {&a0, &a1, &a2, &a3};
    for (int i = 0; i < 4; ++i)
      for (int c = 0; c < 3; ++c) g.grad[static_cast<size_t>(c)](e, i) = (*a[i])(c);
    // Either orientation: K_e = 36V² ∇φ∇φᵀ / (36|V|) (pyEIT's own tetrahedra have six_v < 0).
    g.measure(e) = std::abs(six_v) / 6.0;
    g.weight(e) = 1.0 / (6.0 * std::abs(six_v));
  }
  return g;
}

namespace {

double edge_length(const Mesh& mesh, int a, int b) {
  return std::hypot(mesh.nodes(b, 0) - mesh.nodes(a, 0), mesh.nodes(b, 1) - mesh.nodes(a, 1));
}

}  // namespace

ElectrodeSegments electrode_segments(const Mesh& mesh, double width) {
  const int n_el = mesh.n_electrodes();
  ElectrodeSegments out(static_cast<size_t>(n_el));
  const std::vector<int> next = boundary_successors(mesh);
  if (!mesh.electrode_patches.empty()) {
    for (int l = 0; l < n_el; ++l) {
      const auto& patch = mesh.electrode_patches[static_cast<size_t>(l)];
      if (patch.size() < 2)
        throw std::invalid_argument(
            fmt::format("electrode {}: patch has {} node(s), a CEM electrode needs at least 2", l,
                        patch.size()));
      for (size_t i = 0; i + 1 < patch.size(); ++i) {
        int a = patch[i], b = patch[i + 1];
        if (next[static_cast<size_t>(b)] == a) std::swap(a, b);
        if (next[static_cast<size_t>(a)] != b)
          throw std::invalid_argument(
              fmt::format("electrode {}: patch nodes {} and {} are not joined by a boundary edge",
                          l, patch[i], patch[i + 1]));
        out[static_cast<size_t>(l)].push_back({a, b, edge_length(mesh, a, b), 0.0, 1.0});
      }
    }
    return out;
  }

  if (!(width > 0) || !std::isfinite(width))
    throw std::invalid_argument(fmt::format("electrode width {} must be > 0", width));
  std::vector<int> prev(next.size(), -1);
  for (size_t i = 0; i < next.size(); ++i)
    if (next[i] >= 0) prev[static_cast<size_t>(next[i])] = static_cast<int>(i);
  std::vector<int> electrode_of(next.size(), -1);
  for (int l = 0; l < n_el; ++l) electrode_of[static_cast<size_t>(mesh.electrode_nodes[l])] = l;

  for (int l = 0; l < n_el; ++l) {
    auto& segs = out[static_cast<size_t>(l)];
    const int centre = mesh.electrode_nodes[static_cast<size_t>(l)];
    for (const int direction : {+1, -1}) {
      double remaining = 0.5 * width;
      int node = centre;
      while (remaining > 0) {
        const int other =
            direction > 0 ? next[static_cast<size_t>(node)] : prev[static_cast<size_t>(node)];
        if (other < 0 || other == centre || electrode_of[static_cast<size_t>(other)] >= 0)
          throw std::invalid_argument(fmt::format(
              "electrode {}: width {} reaches node {}, another electrode or the electrode itself",
              l, width, other));
        const double length = edge_length(mesh, node, other);
        const double covered = std::min(1.0, remaining / length);
        if (direction > 0)
          segs.push_back({node, other, length, 0.0, covered});
        else
          segs.push_back({other, node, length, 1.0 - covered, 1.0});
        remaining -= length;
        node = other;
      }
    }
  }
  return out;
}

SegmentIntegrals segment_integrals(const ElectrodeSegment& s) {
  // Antiderivatives of (1−t)², t(1−t), t², 1−t, t, evaluated over [t0, t1], times L.
  const auto diff = [&](auto f) { return s.length * (f(s.t1) - f(s.t0)); };
  return {diff([](double t) { return -(1 - t) * (1 - t) * (1 - t) / 3; }),
          diff([](double t) { return t * t / 2 - t * t * t / 3; }),
          diff([](double t) { return t * t * t / 3; }),
          diff([](double t) { return t - t * t / 2; }), diff([](double t) { return t * t / 2; })};
}

Eigen::SparseMatrix<double> assemble_system(const Mesh& mesh, const ElementGeometry& g,
                                            const Eigen::VectorXd& perm,
                                            const ElectrodeContacts& contacts, double z,
                                            bool grounded) {
  const int n_nodes = mesh.n_nodes();
  const int n = n_nodes + (contacts.empty() ? 0 : mesh.n_electrodes());
  const int ref = mesh.ref_node;
  size_t n_facets = 0;
  for (const auto& c : contacts) n_facets += c.size();
  std::vector<Eigen::Triplet<double>> triplets;
  triplets.reserve(static_cast<size_t>(mesh.n_elems()) * (g.dim + 1) * (g.dim + 1) +
                   16 * n_facets + 1);
  const auto add = [&](int i, int j, double v) {
    if (grounded && (i == ref || j == ref)) return;
    triplets.emplace_back(i, j, v);
  };
  const int nv = g.dim + 1;
  for (int e = 0; e < mesh.n_elems(); ++e) {
    const double scale = perm(e) * g.weight(e);
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < nv; ++j) {
        double dot = 0;
        for (const Eigen::MatrixXd& c : g.grad) dot += c(e, i) * c(e, j);
        add(mesh.elements(e, i), mesh.elements(e, j), scale * dot);
      }
  }
  for (size_t l = 0; l < contacts.size(); ++l) {
    const int u = n_nodes + static_cast<int>(l);
    for (const ContactFacet& f : contacts[l]) {
      for (int i = 0; i < f.count; ++i) {
        for (int j = 0; j < f.count; ++j)
          add(f.node[static_cast<size_t>(i)], f.node[static_cast<size_t>(j)],
              f.mass[static_cast<size_t>(i * f.count + j)] / z);
        add(f.node[static_cast<size_t>(i)], u, -f.load[static_cast<size_t>(i)] / z);
        add(u, f.node[static_cast<size_t>(i)], -f.load[static_cast<size_t>(i)] / z);
      }
      add(u, u, f.measure / z);
    }
  }
  if (grounded) triplets.emplace_back(ref, ref, 1.0);
  Eigen::SparseMatrix<double> A(n, n);
  A.setFromTriplets(triplets.begin(), triplets.end());
  return A;
}

Eigen::SparseMatrix<double> assemble_system(const Mesh& mesh, const ElementGeometry& g,
                                            const Eigen::VectorXd& perm,
                                            const ElectrodeSegments& segments, double z,
                                            bool grounded) {
  return assemble_system(mesh, g, perm, contacts_from_segments(segments), z, grounded);
}

}  // namespace eit::recon::detail
