// Gmsh .msh → Mesh: triangles, node compaction, orientation and electrodes (see msh_reader.hpp).
#include "eit/recon/msh_reader.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/mesh_boundary.hpp"
#include "eit/recon/mesh_check.hpp"
#include "msh_parse.hpp"

namespace eit::recon {
namespace {

struct ElectrodeGroup {
  int number;
  int dim;
  int tag;
  std::string name;
};

// The patch's nodes in boundary order and the one in its middle (by arc length).
std::pair<std::vector<int>, int> patch_in_boundary_order(const Mesh& mesh,
                                                         const std::vector<int>& loop,
                                                         const std::vector<int>& nodes,
                                                         const std::string& where) {
  std::vector<int> on(loop.size(), 0);
  for (int node : nodes) {
    const auto it = std::find(loop.begin(), loop.end(), node);
    if (it == loop.end())
      throw std::runtime_error(
          fmt::format("{}: node {} is not on the mesh's outer boundary", where, node));
    on[it - loop.begin()] = 1;
  }
  // Start after a gap so a patch that wraps past the loop's start stays contiguous.
  const int n = static_cast<int>(loop.size());
  int start = 0;
  while (start < n && !(on[start] && !on[(start - 1 + n) % n])) ++start;
  if (start == n) throw std::runtime_error(fmt::format("{}: covers the whole boundary", where));
  std::vector<int> patch;
  for (int i = start; on[i % n]; ++i) patch.push_back(loop[i % n]);
  if (patch.size() != nodes.size())
    throw std::runtime_error(
        fmt::format("{}: its boundary nodes are not contiguous along the boundary", where));
  std::vector<double> s(patch.size(), 0);
  for (size_t i = 1; i < patch.size(); ++i)
    s[i] = s[i - 1] + (mesh.nodes.row(patch[i]) - mesh.nodes.row(patch[i - 1])).norm();
  size_t mid = 0;
  for (size_t i = 0; i < patch.size(); ++i)
    if (std::abs(s[i] - s.back() / 2) < std::abs(s[mid] - s.back() / 2)) mid = i;
  return {patch, patch[mid]};
}

}  // namespace

Mesh read_msh(const std::filesystem::path& path, const MshImportOptions& options) {
  const std::string file = path.string();
  const msh::RawMsh raw = msh::parse_msh(file);

  std::map<std::size_t, int> index;  // node tag → mesh node, in tag order
  std::vector<const msh::RawElement*> triangles;
  for (const auto& e : raw.elements)
    if (e.type == 4) return read_msh_tetrahedra(path);
  for (const auto& e : raw.elements) {
    if (e.type == 2) {
      triangles.push_back(&e);
    } else if (e.type == 3 || e.type == 9 || (e.type >= 4 && e.type <= 7)) {
      throw std::runtime_error(
          fmt::format("{}:{}: $Elements: element type {}: expected 3-node triangles (type 2); "
                      "quadrilaterals, second-order and 3-D elements are not supported",
                      file, e.line, e.type));
    }
  }
  if (triangles.empty())
    throw std::runtime_error(fmt::format("{}: no triangles (element type 2)", file));
  for (const auto* t : triangles)
    for (std::size_t tag : t->nodes) {
      if (!raw.nodes.count(tag))
        throw std::runtime_error(fmt::format(
            "{}:{}: $Elements: node tag {} is not defined in $Nodes", file, t->line, tag));
      index.emplace(tag, 0);
    }
  Mesh mesh;
  mesh.nodes.resize(static_cast<Eigen::Index>(index.size()), 2);
  int next = 0;
  for (auto& [tag, i] : index) {
    i = next++;
    mesh.nodes(i, 0) = raw.nodes.at(tag).first;
    mesh.nodes(i, 1) = raw.nodes.at(tag).second;
  }
  mesh.elements.resize(static_cast<Eigen::Index>(triangles.size()), 3);
  for (size_t e = 0; e < triangles.size(); ++e) {
    int a = index.at(triangles[e]->nodes[0]), b = index.at(triangles[e]->nodes[1]),
        c = index.at(triangles[e]->nodes[2]);
    const Eigen::Vector2d pa = mesh.nodes.row(a), pb = mesh.nodes.row(b), pc = mesh.nodes.row(c);
    const double area2 =
        (pb.x() - pa.x()) * (pc.y() - pa.y()) - (pb.y() - pa.y()) * (pc.x() - pa.x());
    if (area2 == 0)
      throw std::runtime_error(
          fmt::format("{}:{}: $Elements: triangle {} has zero area", file, triangles[e]->line, e));
    if (area2 < 0) std::swap(b, c);
    mesh.elements.row(static_cast<Eigen::Index>(e)) << a, b, c;
  }

  std::vector<ElectrodeGroup> groups;
  for (const auto& [key, name] : raw.physical_names)
    if ((key.first == 0 || key.first == 1) && msh::electrode_number(name))
      groups.push_back({*msh::electrode_number(name), key.first, key.second, name});
  std::sort(groups.begin(), groups.end(),
            [](const auto& a, const auto& b) { return a.number < b.number; });
  if (!groups.empty()) {
    if (options.n_electrodes > 0 && options.n_electrodes != static_cast<int>(groups.size()))
      throw std::runtime_error(
          fmt::format("{}: {} electrode physical groups, but {} electrodes were asked for", file,
                      groups.size(), options.n_electrodes));
    const std::vector<int> loop = outer_boundary_loop(mesh);
    bool all_lines = true;
    for (const auto& g : groups) {
      const std::string where = fmt::format("{}: physical group \"{}\"", file, g.name);
      std::vector<int> nodes;
      for (const auto& e : raw.elements) {
        if (e.type != (g.dim == 0 ? 15 : 1) ||
            std::find(e.physical.begin(), e.physical.end(), g.tag) == e.physical.end())
          continue;
        for (std::size_t tag : e.nodes) {
          const auto it = index.find(tag);
          if (it == index.end())
            throw std::runtime_error(
                fmt::format("{}: node tag {} is not a node of any triangle", where, tag));
          if (std::find(nodes.begin(), nodes.end(), it->second) == nodes.end())
            nodes.push_back(it->second);
        }
      }
      if (nodes.empty()) throw std::runtime_error(fmt::format("{}: has no elements", where));
      if (g.dim == 0) {
        if (nodes.size() != 1)
          throw std::runtime_error(
              fmt::format("{}: {} nodes, expected one point", where, nodes.size()));
        if (std::find(loop.begin(), loop.end(), nodes[0]) == loop.end())
          throw std::runtime_error(
              fmt::format("{}: node {} is not on the mesh's outer boundary", where, nodes[0]));
        mesh.electrode_nodes.push_back(nodes[0]);
        all_lines = false;
      } else {
        auto [patch, centre] = patch_in_boundary_order(mesh, loop, nodes, where);
        mesh.electrode_nodes.push_back(centre);
        mesh.electrode_patches.push_back(std::move(patch));
      }
    }
    if (!all_lines) mesh.electrode_patches.clear();
  } else if (options.n_electrodes > 0) {
    mesh.electrode_nodes = nearest_boundary_nodes_at_pyeit_angles(mesh, options.n_electrodes);
  } else {
    throw std::runtime_error(fmt::format(
        "{}: no electrodes: the file has no physical groups named electrode1..N; give the "
        "electrode count to place them at pyEIT's angles",
        file));
  }
  mesh.ref_node = pyeit_ref_node(mesh.electrode_nodes);
  check_mesh(mesh, file);
  return mesh;
}

}  // namespace eit::recon
