// Contact facets of the complete electrode model (fem_assembly.hpp): 2-D from the electrode
// segments, 3-D from the surface triangles under each patch.
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <Eigen/Geometry>

#include "eit/recon/mesh_surface.hpp"
#include "fem_assembly.hpp"

namespace eit::recon::detail {
namespace {

// Surface nodes of electrode l: its patch, or disc_patch() of diameter `width` around its node.
std::vector<char> patch_mask(const Mesh& mesh, int l, double width) {
  std::vector<char> in(static_cast<size_t>(mesh.n_nodes()), 0);
  if (!mesh.electrode_patches.empty()) {
    for (int node : mesh.electrode_patches[static_cast<size_t>(l)]) {
      if (node < 0 || node >= mesh.n_nodes())
        throw std::invalid_argument(fmt::format("electrode {}: patch node {} out of range 0..{}",
                                                l, node, mesh.n_nodes() - 1));
      in[static_cast<size_t>(node)] = 1;
    }
    return in;
  }
  if (!(width > 0) || !std::isfinite(width))
    throw std::invalid_argument(fmt::format("electrode width {} must be > 0", width));
  for (int node : disc_patch(mesh, mesh.electrode_nodes[static_cast<size_t>(l)], 0.5 * width))
    in[static_cast<size_t>(node)] = 1;
  return in;
}

ElectrodeContacts surface_contacts(const Mesh& mesh, double width) {
  const std::vector<SurfaceFace> faces = surface_faces(mesh);
  ElectrodeContacts out(static_cast<size_t>(mesh.n_electrodes()));
  for (int l = 0; l < mesh.n_electrodes(); ++l) {
    const std::vector<char> in = patch_mask(mesh, l, width);
    for (const SurfaceFace& f : faces) {
      if (!in[static_cast<size_t>(f.a)] || !in[static_cast<size_t>(f.b)] ||
          !in[static_cast<size_t>(f.c)])
        continue;
      const Eigen::Vector3d a = mesh.nodes.row(f.a), b = mesh.nodes.row(f.b),
                            c = mesh.nodes.row(f.c);
      const double area = 0.5 * (b - a).cross(c - a).norm();
      ContactFacet facet;
      facet.count = 3;
      facet.node = {f.a, f.b, f.c};
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) facet.mass[static_cast<size_t>(3 * i + j)] =
            area / 12.0 * (i == j ? 2.0 : 1.0);
        facet.load[static_cast<size_t>(i)] = area / 3.0;
      }
      facet.measure = area;
      out[static_cast<size_t>(l)].push_back(facet);
    }
    if (out[static_cast<size_t>(l)].empty())
      throw std::invalid_argument(fmt::format(
          "electrode {}: its patch covers no surface triangle ({}); a CEM electrode needs at "
          "least one",
          l,
          mesh.electrode_patches.empty()
              ? fmt::format("disc of diameter {} around node {}", width,
                            mesh.electrode_nodes[static_cast<size_t>(l)])
              : fmt::format("{} patch nodes", mesh.electrode_patches[static_cast<size_t>(l)].size())));
  }
  return out;
}

}  // namespace

ElectrodeContacts contacts_from_segments(const ElectrodeSegments& segments) {
  ElectrodeContacts out(segments.size());
  for (size_t l = 0; l < segments.size(); ++l)
    for (const ElectrodeSegment& s : segments[l]) {
      const SegmentIntegrals q = segment_integrals(s);
      ContactFacet f;
      f.count = 2;
      f.node = {s.a, s.b, -1};
      f.mass[0] = q.aa;
      f.mass[1] = q.ab;
      f.mass[2] = q.ab;
      f.mass[3] = q.bb;
      f.load = {q.a, q.b, 0.0};
      f.measure = s.length * (s.t1 - s.t0);
      out[l].push_back(f);
    }
  return out;
}

ElectrodeContacts electrode_contacts(const Mesh& mesh, double width) {
  if (mesh.dim() == 2) return contacts_from_segments(electrode_segments(mesh, width));
  return surface_contacts(mesh, width);
}

double contact_measure(const std::vector<ContactFacet>& facets) {
  double sum = 0;
  for (const ContactFacet& f : facets) sum += f.measure;
  return sum;
}

}  // namespace eit::recon::detail
