// Mesh generation through Gmsh's C++ API: the body of libeit_gmsh.so, the module that
// mesh_generator_loader.cpp dlopen()s on the first mesh (so commands that do not mesh never load
// Gmsh, OpenCASCADE or FLTK). Built only when Gmsh is found (EIT_HAVE_GMSH). Exports one C
// symbol, eit_gmsh_generate_v1 (mesh_generator_module.hpp); everything else is hidden.
#include <gmsh.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numbers>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "eit/recon/mesh_boundary.hpp"
#include "eit/recon/mesh_check.hpp"
#include "eit/recon/mesh_generator.hpp"
#include "gmsh_outline.hpp"
#include "gmsh_session.hpp"
#include "mesh_generator_module.hpp"
#include "outline_vertices.hpp"

namespace eit::recon {
namespace {

using detail::OutlineVertex;

void set_fixed_options(double h0) {
  detail::set_deterministic_options(h0);
  gmsh::option::setNumber("Mesh.CharacteristicLengthFromPoints", 1);
  gmsh::option::setNumber("Mesh.CharacteristicLengthExtendFromBoundary", 1);
  gmsh::option::setNumber("Mesh.Optimize", 0);
  gmsh::option::setNumber("Mesh.Smoothing", 1);
}

void validate(const OutlinePath& path, const MeshOptions& o) {
  if (o.n_electrodes < 3 || o.n_electrodes > 1024)
    throw std::invalid_argument(
        fmt::format("mesh: {} electrodes, expected 3..1024", o.n_electrodes));
  if (!(o.h0 > 0) || !std::isfinite(o.h0))
    throw std::invalid_argument(fmt::format("mesh: h0 {}, expected > 0", o.h0));
  const double scale = path.perimeter() / (2 * std::numbers::pi);  // equivalent radius
  if (o.h0 < scale * 1e-3)
    throw std::invalid_argument(fmt::format(
        "mesh: h0 {} would give millions of triangles, expected ≥ {:.3g}", o.h0, scale * 1e-3));
  if (!o.save_msh.empty() && o.save_msh_version != 2.2 && o.save_msh_version != 4.1)
    throw std::invalid_argument(
        fmt::format("mesh: .msh version {}, expected 2.2 or 4.1", o.save_msh_version));
  const double spacing = path.perimeter() / o.n_electrodes;
  if (o.electrode_width < 0 || !(o.electrode_width < spacing))
    throw std::invalid_argument(
        fmt::format("mesh: electrode width {}, expected 0 ≤ width < electrode spacing {:.6g}",
                    o.electrode_width, spacing));
}

std::string gmsh_error_text() {
  std::string last;
  try {
    gmsh::logger::getLastError(last);
  } catch (...) {
  }
  return last.empty() ? std::string("unknown Gmsh error") : last;
}

// Builds the geometry and meshes it; returns node tags per electrode (centre, then edges).
Mesh mesh_with_gmsh(const OutlinePath& path, const MeshOptions& o) {
  const std::vector<OutlineVertex> verts =
      detail::outline_vertices(path, o.n_electrodes, 0.5 * o.electrode_width);
  namespace geo = gmsh::model::geo;
  const detail::GeoOutline outline = detail::add_geo_outline(path, verts, o.h0);
  const std::vector<int>& tags = outline.points;
  const int loop = geo::addCurveLoop(outline.curves);
  const int surface = geo::addPlaneSurface({loop});
  geo::synchronize();
  gmsh::model::mesh::generate(2);
  if (!o.save_msh.empty()) {
    // Physical groups select what Gmsh saves: the triangles and one point per electrode.
    gmsh::model::setPhysicalName(2, gmsh::model::addPhysicalGroup(2, {surface}), "body");
    for (size_t i = 0; i < verts.size(); ++i)
      if (verts[i].kind == OutlineVertex::kElectrode) {
        const int k = verts[i].electrode;
        gmsh::model::setPhysicalName(0, gmsh::model::addPhysicalGroup(0, {tags[i]}, 1000 + k),
                                     fmt::format("electrode{}", k + 1));
      }
    gmsh::option::setNumber("Mesh.MshFileVersion", o.save_msh_version);
    gmsh::option::setNumber("Mesh.Binary", 0);
    gmsh::write(o.save_msh.string());
  }

  std::vector<std::size_t> node_tags, elem_tags, tri_nodes;
  std::vector<double> coords, params;
  gmsh::model::mesh::getNodes(node_tags, coords, params, -1, -1, false, false);
  std::map<std::size_t, Eigen::Vector2d> xy;
  for (size_t i = 0; i < node_tags.size(); ++i)
    xy[node_tags[i]] = {coords[3 * i], coords[3 * i + 1]};
  gmsh::model::mesh::getElementsByType(2, elem_tags, tri_nodes);
  if (tri_nodes.empty()) throw std::runtime_error("mesh: Gmsh produced no triangles");

  auto node_of_point = [&](int point_tag) {
    std::vector<std::size_t> t;
    std::vector<double> c, p;
    gmsh::model::mesh::getNodes(t, c, p, 0, point_tag, false, false);
    if (t.size() != 1)
      throw std::runtime_error(
          fmt::format("mesh: boundary point {} has {} nodes, expected 1", point_tag, t.size()));
    return t[0];
  };
  // Electrodes first, then the other referenced nodes in tag order.
  std::map<std::size_t, int> index;
  std::vector<std::size_t> order;
  std::vector<std::size_t> electrode_tags(o.n_electrodes);
  std::vector<std::vector<std::size_t>> edge_tags(o.n_electrodes);
  for (size_t i = 0; i < verts.size(); ++i) {
    if (verts[i].kind == OutlineVertex::kElectrode)
      electrode_tags[verts[i].electrode] = node_of_point(tags[i]);
    else if (verts[i].kind == OutlineVertex::kEdge)
      edge_tags[verts[i].electrode].push_back(node_of_point(tags[i]));
  }
  for (std::size_t t : electrode_tags) {
    index[t] = static_cast<int>(order.size());
    order.push_back(t);
  }
  std::vector<std::size_t> rest(tri_nodes.begin(), tri_nodes.end());
  std::sort(rest.begin(), rest.end());
  rest.erase(std::unique(rest.begin(), rest.end()), rest.end());
  for (std::size_t t : rest)
    if (index.emplace(t, static_cast<int>(order.size())).second) order.push_back(t);

  Mesh mesh;
  mesh.nodes.resize(static_cast<Eigen::Index>(order.size()), 2);
  for (size_t i = 0; i < order.size(); ++i) mesh.nodes.row(i) = xy.at(order[i]).transpose();
  const auto electrodes = electrode_positions(o.outline, o.n_electrodes);
  for (int k = 0; k < o.n_electrodes; ++k) mesh.nodes.row(k) = electrodes[k].transpose();
  const Eigen::Index n_tri = static_cast<Eigen::Index>(tri_nodes.size() / 3);
  mesh.elements.resize(n_tri, 3);
  for (Eigen::Index e = 0; e < n_tri; ++e) {
    int a = index.at(tri_nodes[3 * e]), b = index.at(tri_nodes[3 * e + 1]),
        c = index.at(tri_nodes[3 * e + 2]);
    const Eigen::Vector2d pa = mesh.nodes.row(a), pb = mesh.nodes.row(b), pc = mesh.nodes.row(c);
    const double area2 =
        (pb.x() - pa.x()) * (pc.y() - pa.y()) - (pb.y() - pa.y()) * (pc.x() - pa.x());
    if (area2 < 0) std::swap(b, c);
    mesh.elements.row(e) << a, b, c;
  }
  for (int k = 0; k < o.n_electrodes; ++k) mesh.electrode_nodes.push_back(k);
  mesh.ref_node = pyeit_ref_node(mesh.electrode_nodes);

  if (o.electrode_width > 0) {
    // The patch runs along the CCW boundary from the edge at s_k + w/2 to the edge at s_k − w/2.
    const std::vector<int> loop = outer_boundary_loop(mesh);
    const int n = static_cast<int>(loop.size());
    auto pos = [&](int node) {
      const auto it = std::find(loop.begin(), loop.end(), node);
      if (it == loop.end())
        throw std::runtime_error(fmt::format("mesh: node {} not on the boundary loop", node));
      return static_cast<int>(it - loop.begin());
    };
    for (int k = 0; k < o.n_electrodes; ++k) {
      const int left = index.at(edge_tags[k][0]), right = index.at(edge_tags[k][1]);
      const int from = pos(right), to = pos(left);
      auto walk = [&](int a, int b) {
        std::vector<int> p;
        for (int i = a;; i = (i + 1) % n) {
          p.push_back(loop[i]);
          if (i == b) break;
        }
        return p;
      };
      // The two edge nodes may be listed either way round (across s = 0): take the walk that
      // passes the electrode's centre node.
      std::vector<int> patch = walk(from, to);
      if (std::find(patch.begin(), patch.end(), k) == patch.end()) patch = walk(to, from);
      mesh.electrode_patches.push_back(std::move(patch));
    }
  }
  return mesh;
}

Mesh generate_mesh_with_gmsh(const MeshOptions& options) {
  const OutlinePath path(options.outline);
  validate(path, options);
  detail::GmshSession& session = detail::GmshSession::instance();
  std::lock_guard lock(session.mutex());
  try {
    gmsh::clear();
    gmsh::model::add("eitstream");
    set_fixed_options(options.h0);
    gmsh::logger::start();
    Mesh mesh = mesh_with_gmsh(path, options);
    gmsh::logger::stop();
    gmsh::clear();
    check_mesh(mesh, "generated mesh");
    return mesh;
  } catch (const std::invalid_argument&) {
    gmsh::logger::stop();
    gmsh::clear();
    throw;
  } catch (const std::runtime_error&) {
    gmsh::logger::stop();
    gmsh::clear();
    throw;
  } catch (...) {
    const std::string why = gmsh_error_text();
    gmsh::logger::stop();
    gmsh::clear();
    throw std::runtime_error(fmt::format("mesh: Gmsh failed: {}", why));
  }
}

}  // namespace
}  // namespace eit::recon

extern "C" __attribute__((visibility("default"))) int eit_gmsh_generate_v1(
    const eit::recon::MeshOptions* options, eit::recon::Mesh* out, std::string* error) {
  return eit::recon::run_in_module([&] { *out = eit::recon::generate_mesh_with_gmsh(*options); },
                                   error);
}
