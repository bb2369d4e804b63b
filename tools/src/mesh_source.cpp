#include "mesh_source.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/default_circle_mesh.hpp"
#include "eit/recon/mesh_generator.hpp"
#include "eit/recon/mesh_generator_3d.hpp"
#include "eit/recon/mesh_io.hpp"
#include "eit/recon/msh_reader.hpp"

namespace eit::cli {
namespace {

double parse_number(const std::string& text, const std::string& what) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    throw std::invalid_argument(fmt::format("{}: '{}' is not a number", what, text));
  return v;
}

recon::PolygonOutline read_polygon(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::invalid_argument(fmt::format("--mesh polygon:{}: cannot open file", file));
  recon::PolygonOutline out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    for (char& c : line)
      if (c == ',' || c == ';' || c == '\t' || c == '\r') c = ' ';
    std::istringstream fields(line);
    std::string xs, ys, extra;
    if (!(fields >> xs)) continue;
    if (!(fields >> ys) || (fields >> extra))
      throw std::invalid_argument(
          fmt::format("{}:{}: expected two numbers \"x,y\", found '{}'", file, n, line));
    const std::string where = fmt::format("{}:{}", file, n);
    out.points.emplace_back(parse_number(xs, where + ": x"), parse_number(ys, where + ": y"));
  }
  // A ring written closed (the first point again at the end, as GeoJSON and shapely write it)
  // is the same polygon: the repeat would be refused as two coinciding points.
  if (out.points.size() > 3 && out.points.front() == out.points.back()) out.points.pop_back();
  return out;
}

recon::Mesh generate(const recon::MeshOptions& mesh, const MeshSourceOptions& o) {
  if (o.dim == 2) return recon::generate_mesh(mesh);
  if (o.dim != 3)
    throw std::invalid_argument(fmt::format("--dim {}: expected 2 or 3", o.dim));
  recon::Mesh3dOptions m3;
  m3.outline = mesh.outline;
  m3.height = o.height;
  m3.n_electrodes = o.n_electrodes;
  m3.n_rings = o.rings;
  m3.ring_z = o.ring_z;
  m3.h0 = o.h0;
  m3.h_electrode = o.h_electrode;
  if (o.mesher != "delaunay" && o.mesher != "extruded")
    throw std::invalid_argument(
        fmt::format("--mesher '{}': expected delaunay or extruded", o.mesher));
  m3.mesher = o.mesher == "extruded" ? recon::Mesh3dOptions::Mesher::kExtruded
                                     : recon::Mesh3dOptions::Mesher::kDelaunay;
  using Shape = recon::Mesh3dOptions::ElectrodeShape;
  if (o.electrode_width > 0) {
    if (o.electrode_shape != "rect" && o.electrode_shape != "circle")
      throw std::invalid_argument(fmt::format(
          "--electrode-shape '{}': expected rect or circle", o.electrode_shape));
    m3.electrode_shape = o.electrode_shape == "rect" ? Shape::kRectangle : Shape::kCircle;
    m3.electrode_width = o.electrode_width;
    m3.electrode_height = o.electrode_height;
  }
  return recon::generate_mesh_3d(m3);
}

}  // namespace

recon::Mesh load_mesh_source(const MeshSourceOptions& o) {
  const auto colon = o.spec.find(':');
  const std::string kind = o.spec.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : o.spec.substr(colon + 1);
  recon::MeshOptions mesh;
  mesh.n_electrodes = o.n_electrodes;
  mesh.h0 = o.h0;
  mesh.electrode_width = o.electrode_width;
  if (kind == "circle") {
    mesh.outline = recon::CircleOutline{arg.empty() ? 1.0 : parse_number(arg, "--mesh circle:R")};
    // The default mesh is stored in the binary: no Gmsh load (EIT_MESH_NO_EMBEDDED=1 makes Gmsh
    // generate it, for scripts/embed_default_mesh.py).
    const char* no_embedded = std::getenv("EIT_MESH_NO_EMBEDDED");
    if (o.dim == 2 && recon::is_default_circle_mesh(mesh) && !(no_embedded && *no_embedded == '1'))
      return recon::default_circle_mesh();
    return generate(mesh, o);
  }
  if (kind == "ellipse") {
    const auto comma = arg.find(',');
    if (comma == std::string::npos)
      throw std::invalid_argument(
          fmt::format("--mesh '{}': expected ellipse:A,B (semi-axes along x and y)", o.spec));
    mesh.outline = recon::EllipseOutline{parse_number(arg.substr(0, comma), "--mesh ellipse A"),
                                         parse_number(arg.substr(comma + 1), "--mesh ellipse B")};
    return generate(mesh, o);
  }
  if (kind == "polygon" && !arg.empty()) {
    mesh.outline = read_polygon(arg);
    return generate(mesh, o);
  }
  if (kind == "csv" && !arg.empty()) return recon::load_mesh_csv_folder(arg);
  if (kind == "msh" && !arg.empty()) {
    // Electrodes from physical groups when the file has them, else N at pyEIT's angles.
    try {
      return recon::read_msh(arg, {.n_electrodes = 0});
    } catch (const std::runtime_error& e) {
      if (std::string(e.what()).find("no electrodes") == std::string::npos) throw;
    }
    return recon::read_msh(arg, {.n_electrodes = o.n_electrodes});
  }
  throw std::invalid_argument(fmt::format(
      "--mesh '{}': expected circle[:R], ellipse:A,B, polygon:FILE, csv:DIR or msh:FILE", o.spec));
}

int electrode_ring_count(const recon::Mesh& mesh) {
  if (mesh.dim() != 3 || mesh.n_electrodes() == 0) return 1;
  const auto z = mesh.nodes.col(2);
  double lo = z(0), hi = z(0);
  for (Eigen::Index i = 0; i < z.size(); ++i) {
    lo = std::min(lo, z(i));
    hi = std::max(hi, z(i));
  }
  const double tol = 1e-6 * std::max(hi - lo, 1e-300);
  std::vector<double> levels;
  for (int node : mesh.electrode_nodes) {
    const double h = z(node);
    if (std::none_of(levels.begin(), levels.end(), [&](double l) { return std::abs(l - h) <= tol; }))
      levels.push_back(h);
  }
  std::sort(levels.begin(), levels.end());
  const int rings = static_cast<int>(levels.size());
  const int n = mesh.n_electrodes();
  if (n % rings != 0)
    throw std::invalid_argument(fmt::format(
        "mesh: {} electrodes at {} heights, expected equally many per ring", n, rings));
  for (int e = 0; e < n; ++e) {
    const double expected = levels[static_cast<size_t>(e / (n / rings))];
    if (std::abs(z(mesh.electrode_nodes[static_cast<size_t>(e)]) - expected) > tol)
      throw std::invalid_argument(fmt::format(
          "mesh: electrode {} at z = {}, expected z = {} (electrodes numbered ring by ring from "
          "the lowest, {} per ring)",
          e, z(mesh.electrode_nodes[static_cast<size_t>(e)]), expected, n / rings));
  }
  return rings;
}

}  // namespace eit::cli
