// Tetrahedral .msh import through Gmsh's own reader, in the Gmsh module libeit_gmsh.so (contract:
// msh_reader.hpp, read_msh_tetrahedra). Exports eit_gmsh_read_tetrahedra_v1.
#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/mesh_boundary.hpp"
#include "eit/recon/mesh_check.hpp"
#include "eit/recon/mesh_surface.hpp"
#include "eit/recon/msh_reader.hpp"
#include "gmsh_session.hpp"
#include "mesh_generator_module.hpp"
#include "msh_parse.hpp"

namespace eit::recon {
namespace {

// Mesh node indices of every node of the entities of physical group (dim, tag).
std::vector<int> group_nodes(int dim, int tag, const std::vector<int>& index) {
  std::vector<int> entities;
  gmsh::model::getEntitiesForPhysicalGroup(dim, tag, entities);
  std::vector<int> out;
  for (int entity : entities) {
    std::vector<std::size_t> tags;
    std::vector<double> coords, params;
    gmsh::model::mesh::getNodes(tags, coords, params, dim, entity, /*includeBoundary=*/true,
                                false);
    for (std::size_t t : tags)
      out.push_back(t < index.size() ? index[t] : -1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Mesh read_with_gmsh(const std::string& file) {
  gmsh::open(file);
  std::vector<std::size_t> elem_tags, tet_nodes;
  gmsh::model::mesh::getElementsByType(4, elem_tags, tet_nodes);
  if (tet_nodes.empty())
    throw std::runtime_error(fmt::format("{}: no tetrahedra (element type 4)", file));
  std::vector<std::size_t> node_tags;
  std::vector<double> coords, params;
  gmsh::model::mesh::getNodes(node_tags, coords, params, -1, -1, false, false);
  std::map<std::size_t, std::size_t> where;  // tag → position in coords
  for (size_t i = 0; i < node_tags.size(); ++i) where[node_tags[i]] = i;
  std::map<std::size_t, int> used;  // tags of tetrahedron nodes, in tag order
  for (std::size_t t : tet_nodes) {
    if (!where.count(t))
      throw std::runtime_error(fmt::format("{}: a tetrahedron uses node tag {}, not defined", file, t));
    used.emplace(t, 0);
  }
  std::vector<int> index(used.rbegin()->first + 1, -1);
  Mesh mesh;
  mesh.nodes.resize(static_cast<Eigen::Index>(used.size()), 3);
  int next = 0;
  for (auto& [tag, i] : used) {
    i = next++;
    index[tag] = i;
    const std::size_t c = where.at(tag);
    mesh.nodes.row(i) << coords[3 * c], coords[3 * c + 1], coords[3 * c + 2];
  }
  const auto n_tet = static_cast<Eigen::Index>(tet_nodes.size() / 4);
  mesh.elements.resize(n_tet, 4);
  for (Eigen::Index e = 0; e < n_tet; ++e)
    for (int k = 0; k < 4; ++k) mesh.elements(e, k) = index[tet_nodes[4 * e + k]];
  for (Eigen::Index e = 0; e < n_tet; ++e)
    if (tet_six_volume(mesh, static_cast<int>(e)) < 0)
      std::swap(mesh.elements(e, 2), mesh.elements(e, 3));

  // Electrode groups by number: a surface patch and/or a centre point.
  struct Electrode {
    std::vector<int> patch;
    int centre = -1;
    std::string name;
  };
  std::map<int, Electrode> electrodes;
  gmsh::vectorpair groups;
  gmsh::model::getPhysicalGroups(groups);
  for (const auto& [dim, tag] : groups) {
    if (dim != 0 && dim != 2) continue;
    std::string name;
    gmsh::model::getPhysicalName(dim, tag, name);
    const auto number = msh::electrode_number(name);
    if (!number) continue;
    const std::vector<int> nodes = group_nodes(dim, tag, index);
    const std::string what = fmt::format("{}: physical group \"{}\"", file, name);
    if (nodes.empty() || nodes.front() < 0)
      throw std::runtime_error(
          fmt::format("{}: {}", what, nodes.empty() ? "has no nodes" : "uses a node of no tetrahedron"));
    Electrode& el = electrodes[*number];
    el.name = name;
    if (dim == 0) {
      if (nodes.size() != 1)
        throw std::runtime_error(fmt::format("{}: {} nodes, expected one point", what, nodes.size()));
      el.centre = nodes[0];
    } else {
      el.patch = nodes;
    }
  }
  if (electrodes.empty())
    throw std::runtime_error(fmt::format(
        "{}: no electrodes: a tetrahedral mesh needs physical groups named electrode1..N (surface "
        "patches and/or points)",
        file));
  bool patches = true;
  for (auto& [number, el] : electrodes) {
    if (el.centre < 0) {  // the patch node nearest the patch's mean position
      Eigen::RowVector3d mean = Eigen::RowVector3d::Zero();
      for (int n : el.patch) mean += mesh.nodes.row(n);
      mean /= static_cast<double>(el.patch.size());
      el.centre = el.patch.front();
      for (int n : el.patch)
        if ((mesh.nodes.row(n) - mean).squaredNorm() <
            (mesh.nodes.row(el.centre) - mean).squaredNorm())
          el.centre = n;
    }
    mesh.electrode_nodes.push_back(el.centre);
    patches = patches && !el.patch.empty();
  }
  if (patches)
    for (auto& [number, el] : electrodes) mesh.electrode_patches.push_back(el.patch);
  mesh.ref_node = pyeit_ref_node(mesh.electrode_nodes);
  return mesh;
}

}  // namespace

Mesh read_msh_tetrahedra_with_gmsh(const std::filesystem::path& path) {
  const std::string file = path.string();
  if (!std::filesystem::exists(path))
    throw std::runtime_error(fmt::format("{}: no such file", file));
  detail::GmshSession& session = detail::GmshSession::instance();
  std::lock_guard lock(session.mutex());
  try {
    gmsh::clear();
    gmsh::option::setNumber("General.Terminal", 0);
    gmsh::logger::start();
    Mesh mesh = read_with_gmsh(file);
    gmsh::logger::stop();
    gmsh::clear();
    check_mesh(mesh, file);
    return mesh;
  } catch (const std::runtime_error&) {
    gmsh::logger::stop();
    gmsh::clear();
    throw;
  } catch (const std::invalid_argument& e) {
    gmsh::logger::stop();
    gmsh::clear();
    throw std::runtime_error(e.what());
  } catch (...) {
    std::string why;
    try {
      gmsh::logger::getLastError(why);
    } catch (...) {
    }
    gmsh::logger::stop();
    gmsh::clear();
    throw std::runtime_error(
        fmt::format("{}: Gmsh could not read it: {}", file, why.empty() ? "unknown error" : why));
  }
}

}  // namespace eit::recon

extern "C" __attribute__((visibility("default"))) int eit_gmsh_read_tetrahedra_v1(
    const std::filesystem::path* path, eit::recon::Mesh* out, std::string* error) {
  return eit::recon::run_in_module([&] { *out = eit::recon::read_msh_tetrahedra_with_gmsh(*path); },
                                   error);
}
