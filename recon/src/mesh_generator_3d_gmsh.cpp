// 3-D mesh generation (Delaunay or extruded, mesh_generator_3d.hpp) through Gmsh's C++ API, in
// the Gmsh module libeit_gmsh.so beside the 2-D generator (only with Gmsh: EIT_HAVE_GMSH).
// Exports eit_gmsh_generate_3d_v2.
#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/mesh_boundary.hpp"
#include "eit/recon/mesh_check.hpp"
#include "eit/recon/mesh_check_3d.hpp"
#include "eit/recon/mesh_generator_3d.hpp"
#include "eit/recon/mesh_surface.hpp"
#include "extrusion_layers.hpp"
#include "gmsh_outline.hpp"
#include "gmsh_session.hpp"
#include "mesh_generator_module.hpp"
#include "outline_vertices.hpp"

namespace eit::recon {
namespace {

using detail::OutlineVertex;

void validate(const OutlinePath& path, const Mesh3dOptions& o, const std::vector<double>& z) {
  if (o.n_rings < 1 || o.n_rings > 3)
    throw std::invalid_argument(fmt::format("mesh 3d: {} rings, expected 1..3", o.n_rings));
  if (o.n_electrodes < 3 * o.n_rings || o.n_electrodes > 256 || o.n_electrodes % o.n_rings != 0)
    throw std::invalid_argument(fmt::format(
        "mesh 3d: {} electrodes on {} rings, expected a multiple of the rings, 3..256 in all",
        o.n_electrodes, o.n_rings));
  if (!(o.height > 0) || !std::isfinite(o.height))
    throw std::invalid_argument(fmt::format("mesh 3d: height {}, expected > 0", o.height));
  const double scale = path.perimeter() / (2 * std::numbers::pi);
  if (!(o.h0 > 0) || !std::isfinite(o.h0) || o.h0 < 5e-3 * std::max(scale, o.height))
    throw std::invalid_argument(fmt::format(
        "mesh 3d: h0 {}, expected ≥ {:.3g} (finer would give tens of millions of tetrahedra)",
        o.h0, 5e-3 * std::max(scale, o.height)));
  if (o.h_electrode < 0 || o.h_electrode > o.h0)
    throw std::invalid_argument(
        fmt::format("mesh 3d: h_electrode {}, expected 0 (auto) or in (0, h0 = {}]", o.h_electrode,
                    o.h0));
  if (o.refine_radius < 0)
    throw std::invalid_argument(
        fmt::format("mesh 3d: refine radius {}, expected ≥ 0", o.refine_radius));
  if (static_cast<int>(z.size()) != o.n_rings)
    throw std::invalid_argument(fmt::format("mesh 3d: {} ring heights for {} rings", z.size(),
                                            o.n_rings));
  for (size_t r = 0; r < z.size(); ++r)
    if (!(z[r] > 0 && z[r] < o.height) || (r > 0 && !(z[r] > z[r - 1])))
      throw std::invalid_argument(fmt::format(
          "mesh 3d: ring height {} = {}, expected ascending heights in (0, {})", r, z[r],
          o.height));
  using Shape = Mesh3dOptions::ElectrodeShape;
  if (o.mesher == Mesh3dOptions::Mesher::kExtruded && o.electrode_shape == Shape::kCircle)
    throw std::invalid_argument(
        "mesh 3d: circular electrode patches need the Delaunay mesher (--mesher delaunay); the "
        "extruded mesher makes point and rectangular (rect) electrodes only");
  if (o.electrode_shape == Shape::kPoint) return;
  const double spacing = path.perimeter() / (o.n_electrodes / o.n_rings);
  if (!(o.electrode_width > 0) || !(o.electrode_width < 0.9 * spacing))
    throw std::invalid_argument(fmt::format(
        "mesh 3d: electrode width {}, expected > 0 and < {:.4g} (0.9 × the electrode spacing "
        "{:.4g} along the outline)",
        o.electrode_width, 0.9 * spacing, spacing));
  const double half = o.electrode_shape == Shape::kRectangle ? 0.5 * o.electrode_height
                                                             : 0.5 * o.electrode_width;
  if (o.electrode_shape == Shape::kRectangle && !(o.electrode_height > 0))
    throw std::invalid_argument(fmt::format(
        "mesh 3d: electrode height {}, expected > 0 for rectangular electrodes",
        o.electrode_height));
  const double eps = 1e-9 * o.height;
  for (size_t r = 0; r < z.size(); ++r) {
    if (z[r] - half < -eps || z[r] + half > o.height + eps)
      throw std::invalid_argument(fmt::format(
          "mesh 3d: ring {} at z = {} with electrodes {} high reaches outside 0..{}", r, z[r],
          2 * half, o.height));
    if (r > 0 && !(z[r] - half > z[r - 1] + half + eps))
      throw std::invalid_argument(fmt::format(
          "mesh 3d: electrodes {} high on rings at z = {} and {} overlap", 2 * half, z[r - 1],
          z[r]));
  }
}

// Extrusion levels: 0, every ring height, the rectangles' top and bottom edges, the height.
std::vector<double> extrusion_levels(const Mesh3dOptions& o, const std::vector<double>& z) {
  std::vector<double> levels{0.0, o.height};
  levels.insert(levels.end(), z.begin(), z.end());
  if (o.electrode_shape == Mesh3dOptions::ElectrodeShape::kRectangle)
    for (double zr : z)
      for (double side : {-0.5, 0.5}) levels.push_back(zr + side * o.electrode_height);
  std::sort(levels.begin(), levels.end());
  const double eps = 1e-9 * o.height;
  std::vector<double> out;
  for (double l : levels) {
    const double c = std::clamp(l, 0.0, o.height);
    if (out.empty() || c > out.back() + eps) out.push_back(c);
  }
  return out;
}

Mesh mesh_with_gmsh(const OutlinePath& path, const Mesh3dOptions& o, const std::vector<double>& z) {
  namespace geo = gmsh::model::geo;
  const int per_ring = o.n_electrodes / o.n_rings;
  const double h_el = o.h_electrode > 0 ? o.h_electrode : o.h0 / 3;
  using Shape = Mesh3dOptions::ElectrodeShape;
  const bool rect = o.electrode_shape == Shape::kRectangle;
  const bool disc = o.electrode_shape == Shape::kCircle;
  const double radius = o.refine_radius > 0 ? o.refine_radius : 2 * h_el;
  const std::vector<OutlineVertex> verts =
      detail::outline_vertices(path, per_ring, rect ? 0.5 * o.electrode_width : 0.0);

  const detail::GeoOutline base = detail::add_geo_outline(path, verts, o.h0);
  const std::vector<int>& curves = base.curves;
  int surface = geo::addPlaneSurface({geo::addCurveLoop(curves)});
  // Refined within `radius` of the whole patch: its half-diagonal (rectangle) or radius (disc).
  const double full = radius + (rect   ? 0.5 * std::hypot(o.electrode_width, o.electrode_height)
                                : disc ? 0.5 * o.electrode_width
                                       : 0.0);
  // Extruded mesher: the base's triangles refined about the electrodes' outline positions (within
  // radius of the rectangle's side edges), layers refined about the ring heights (within radius of
  // the rectangle's top and bottom edges).
  const bool extruded = o.mesher == Mesh3dOptions::Mesher::kExtruded;
  const double full_xy = radius + (rect ? 0.5 * o.electrode_width : 0.0);
  const double full_z = radius + (rect ? 0.5 * o.electrode_height : 0.0);
  // Extrude layer by layer: the interfaces are the ring heights (and rectangle edges). Gmsh returns
  // the top, the volume, then one side surface per curve of the base, in the curves' order.
  const std::vector<double> levels = extrusion_levels(o, z);
  std::vector<int> volumes;
  std::vector<std::vector<int>> sides;  // [layer][curve]
  for (size_t l = 0; l + 1 < levels.size(); ++l) {
    gmsh::vectorpair out;
    std::vector<double> heights;  // empty: a geometric extrusion, meshed by 3-D Delaunay
    if (extruded)
      heights = detail::graded_layer_fractions(levels[l], levels[l + 1], z, h_el, o.h0, full_z,
                                               3 * radius);
    geo::extrude({{2, surface}}, 0, 0, levels[l + 1] - levels[l], out,
                 std::vector<int>(heights.size(), 1), heights, /*recombine=*/false);
    if (out.size() != curves.size() + 2)
      throw std::runtime_error(fmt::format("mesh 3d: extrusion gave {} entities, expected {}",
                                           out.size(), curves.size() + 2));
    surface = out[0].second;
    volumes.push_back(out[1].second);
    sides.emplace_back();
    for (size_t i = 2; i < out.size(); ++i) sides.back().push_back(out[i].second);
  }
  geo::synchronize();
  // Rectangular patches: the side surfaces inside [s_k ± w/2] × [z_r ± h/2].
  std::vector<std::vector<int>> patch_surfaces(static_cast<size_t>(o.n_electrodes));
  if (rect) {
    const double P = path.perimeter(), tol = 1e-9 * std::max(P, o.height);
    for (int r = 0; r < o.n_rings; ++r)
      for (int k = 0; k < per_ring; ++k) {
        const double sk = P * k / per_ring;
        for (size_t l = 0; l + 1 < levels.size(); ++l) {
          const double zm = 0.5 * (levels[l] + levels[l + 1]);
          if (std::abs(zm - z[static_cast<size_t>(r)]) > 0.5 * o.electrode_height) continue;
          for (size_t i = 0; i < verts.size(); ++i) {
            const double s1 = i + 1 < verts.size() ? verts[i + 1].s : verts[0].s + P;
            const double sm = 0.5 * (verts[i].s + s1);
            if (std::abs(std::remainder(sm - sk, P)) < 0.5 * o.electrode_width - tol)
              patch_surfaces[static_cast<size_t>(r * per_ring + k)].push_back(sides[l][i]);
          }
        }
      }
  }

  // Electrode points, found by position (one geometric vertex each).
  const double eps = 1e-9 * std::max(path.perimeter(), o.height);
  std::vector<int> electrode_points(static_cast<size_t>(o.n_electrodes), -1);
  for (int r = 0; r < o.n_rings; ++r)
    for (const auto& v : verts) {
      if (v.kind != OutlineVertex::kElectrode) continue;
      gmsh::vectorpair found;
      gmsh::model::getEntitiesInBoundingBox(v.p.x() - eps, v.p.y() - eps, z[r] - eps,
                                            v.p.x() + eps, v.p.y() + eps, z[r] + eps, found, 0);
      if (found.size() != 1)
        throw std::runtime_error(fmt::format(
            "mesh 3d: {} geometry points at electrode {} ({}, {}, {}), expected 1", found.size(),
            r * per_ring + v.electrode, v.p.x(), v.p.y(), z[r]));
      electrode_points[static_cast<size_t>(r * per_ring + v.electrode)] = found[0].second;
    }
  std::vector<double> point_list(electrode_points.begin(), electrode_points.end());
  if (extruded) {  // only the base is meshed by size: the electrodes' points at z = 0
    point_list.clear();
    for (size_t i = 0; i < verts.size(); ++i)
      if (verts[i].kind == OutlineVertex::kElectrode) point_list.push_back(base.points[i]);
  }
  namespace field = gmsh::model::mesh::field;
  const int distance = field::add("Distance");
  field::setNumbers(distance, "PointsList", point_list);
  const int threshold = field::add("Threshold");
  field::setNumber(threshold, "InField", distance);
  field::setNumber(threshold, "SizeMin", h_el);
  field::setNumber(threshold, "SizeMax", o.h0);
  field::setNumber(threshold, "DistMin", extruded ? full_xy : full);
  field::setNumber(threshold, "DistMax", (extruded ? full_xy : full) + 3 * radius);
  field::setAsBackgroundMesh(threshold);

  gmsh::model::mesh::generate(3);
  if (!o.save_msh.empty()) {
    gmsh::model::setPhysicalName(3, gmsh::model::addPhysicalGroup(3, volumes), "body");
    // Each electrode: its point (dim 0) and, for rectangles, its patch (dim 2), both
    // "electrodeK" (read_msh_tetrahedra takes the centre from the point, the patch from the
    // surface).
    for (int e = 0; e < o.n_electrodes; ++e) {
      const std::string name = fmt::format("electrode{}", e + 1);
      gmsh::model::setPhysicalName(
          0, gmsh::model::addPhysicalGroup(0, {electrode_points[static_cast<size_t>(e)]}, 1000 + e),
          name);
      const auto& patch = patch_surfaces[static_cast<size_t>(e)];
      if (!patch.empty())
        gmsh::model::setPhysicalName(2, gmsh::model::addPhysicalGroup(2, patch, 2000 + e), name);
    }
    gmsh::option::setNumber("Mesh.MshFileVersion", 4.1);
    gmsh::option::setNumber("Mesh.Binary", 0);
    gmsh::write(o.save_msh.string());
  }

  std::vector<std::size_t> node_tags, elem_tags, tet_nodes;
  std::vector<double> coords, params;
  gmsh::model::mesh::getNodes(node_tags, coords, params, -1, -1, false, false);
  std::size_t max_tag = 0;
  for (std::size_t t : node_tags) max_tag = std::max(max_tag, t);
  std::vector<Eigen::Index> coord_of(max_tag + 1, -1);
  for (size_t i = 0; i < node_tags.size(); ++i) coord_of[node_tags[i]] = static_cast<Eigen::Index>(i);
  gmsh::model::mesh::getElementsByType(4, elem_tags, tet_nodes);
  if (tet_nodes.empty()) throw std::runtime_error("mesh 3d: Gmsh produced no tetrahedra");

  std::vector<int> index(max_tag + 1, -1);
  std::vector<std::size_t> order;
  for (int e = 0; e < o.n_electrodes; ++e) {
    std::vector<std::size_t> t;
    std::vector<double> c, p;
    gmsh::model::mesh::getNodes(t, c, p, 0, electrode_points[static_cast<size_t>(e)], false,
                                false);
    if (t.size() != 1)
      throw std::runtime_error(fmt::format("mesh 3d: electrode {} point has {} nodes, expected 1",
                                           e, t.size()));
    index[t[0]] = static_cast<int>(order.size());
    order.push_back(t[0]);
  }
  std::vector<std::size_t> rest(tet_nodes.begin(), tet_nodes.end());
  std::sort(rest.begin(), rest.end());
  rest.erase(std::unique(rest.begin(), rest.end()), rest.end());
  for (std::size_t t : rest)
    if (index[t] < 0) {
      index[t] = static_cast<int>(order.size());
      order.push_back(t);
    }

  Mesh mesh;
  mesh.nodes.resize(static_cast<Eigen::Index>(order.size()), 3);
  for (size_t i = 0; i < order.size(); ++i) {
    const Eigen::Index c = coord_of[order[i]];
    mesh.nodes.row(static_cast<Eigen::Index>(i)) << coords[3 * c], coords[3 * c + 1],
        coords[3 * c + 2];
  }
  const auto ring_positions = electrode_positions(o.outline, per_ring);
  for (int e = 0; e < o.n_electrodes; ++e)
    mesh.nodes.row(e) << ring_positions[static_cast<size_t>(e % per_ring)].x(),
        ring_positions[static_cast<size_t>(e % per_ring)].y(), z[static_cast<size_t>(e / per_ring)];
  const Eigen::Index n_tet = static_cast<Eigen::Index>(tet_nodes.size() / 4);
  mesh.elements.resize(n_tet, 4);
  for (Eigen::Index e = 0; e < n_tet; ++e)
    for (int k = 0; k < 4; ++k) mesh.elements(e, k) = index[tet_nodes[4 * e + k]];
  for (Eigen::Index e = 0; e < n_tet; ++e)
    if (tet_six_volume(mesh, static_cast<int>(e)) < 0) std::swap(mesh.elements(e, 2), mesh.elements(e, 3));
  for (int e = 0; e < o.n_electrodes; ++e) mesh.electrode_nodes.push_back(e);
  mesh.ref_node = pyeit_ref_node(mesh.electrode_nodes);
  if (rect)
    for (const auto& surfaces : patch_surfaces) {
      std::vector<int> nodes;
      for (int tag : surfaces) {
        std::vector<std::size_t> t;
        std::vector<double> c, p;
        gmsh::model::mesh::getNodes(t, c, p, 2, tag, /*includeBoundary=*/true, false);
        for (std::size_t n : t) nodes.push_back(index[n]);
      }
      std::sort(nodes.begin(), nodes.end());
      nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
      mesh.electrode_patches.push_back(std::move(nodes));
    }
  if (disc)
    for (int e = 0; e < o.n_electrodes; ++e)
      mesh.electrode_patches.push_back(disc_patch(mesh, e, 0.5 * o.electrode_width));
  return mesh;
}

}  // namespace

Mesh generate_mesh_3d_with_gmsh(const Mesh3dOptions& options) {
  const OutlinePath path(options.outline);
  const std::vector<double> z = ring_heights(options);
  validate(path, options, z);
  detail::GmshSession& session = detail::GmshSession::instance();
  std::lock_guard lock(session.mutex());
  const auto cleanup = [] {
    gmsh::logger::stop();
    gmsh::clear();
  };
  try {
    gmsh::clear();
    gmsh::model::add("eitstream3d");
    detail::set_deterministic_options(options.h0);
    // Delaunay volume. HXT (10) meshes 3-D ~4× faster, but Gmsh 4.8 hands it the surface nodes in
    // the order of their addresses, so its meshes change with the heap's history (the length of
    // an output path did it); threads (2-D or HXT) change meshes from run to run. Without the
    // optimisation, slivers of quality < 0.01 remain (docs/benchmarks.md, "3-D meshing speed").
    gmsh::option::setNumber("Mesh.Algorithm3D", 1);
    gmsh::option::setNumber("Mesh.RandomSeed", 1);
    gmsh::option::setNumber("Mesh.CharacteristicLengthFromPoints", 0);  // the size field rules
    gmsh::option::setNumber("Mesh.CharacteristicLengthExtendFromBoundary", 0);
    // Removes slivers (Delaunay); extruded layers are not optimised (nothing to gain, time lost).
    gmsh::option::setNumber("Mesh.Optimize",
                            options.mesher == Mesh3dOptions::Mesher::kDelaunay ? 1 : 0);
    gmsh::logger::start();
    Mesh mesh = mesh_with_gmsh(path, options, z);
    cleanup();
    check_mesh(mesh, "generated 3-D mesh");
    try {
      require_no_slivers(mesh, 0.01, "generated 3-D mesh");
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(e.what());
    }
    return mesh;
  } catch (const std::invalid_argument&) {
    cleanup();
    throw;
  } catch (const std::runtime_error&) {
    cleanup();
    throw;
  } catch (...) {
    std::string why;
    try {
      gmsh::logger::getLastError(why);
    } catch (...) {
    }
    cleanup();
    throw std::runtime_error(
        fmt::format("mesh 3d: Gmsh failed: {}", why.empty() ? "unknown Gmsh error" : why));
  }
}

}  // namespace eit::recon

extern "C" __attribute__((visibility("default"))) int eit_gmsh_generate_3d_v2(
    const eit::recon::Mesh3dOptions* options, eit::recon::Mesh* out, std::string* error) {
  return eit::recon::run_in_module(
      [&] { *out = eit::recon::generate_mesh_3d_with_gmsh(*options); }, error);
}
