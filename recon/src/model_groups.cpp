// The /protocol and /geometry groups (layout: docs/formats.md), written and read alike by the
// Model file, the image recordings and (the protocol) the raw-frame recordings.
#include "eit/recon/model_groups.hpp"

#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/hdf5_io.hpp"

namespace eit::recon {
namespace {

// Bounds on what the files' integer attributes may say, so that none wraps into a plausible int
// (2^32 + 16 pixels became 16). validate_model() checks the exact ranges afterwards.
constexpr int64_t kMaxElectrodes = 1024;   // as many as any mesh eitstream builds
// Pixels or voxels along one axis: any count an int holds (the mask's shape must match it too).
constexpr int64_t kMaxGridSide = std::numeric_limits<int>::max();

}  // namespace

void write_protocol(hid_t root, const Protocol& p, const std::string& file) {
  h5::Handle g = h5::create_group(root, "protocol", file);
  h5::write_attr(g.get(), "n_electrodes", int64_t{p.n_electrodes}, file);
  h5::write_attr(g.get(), "drive_distance", int64_t{p.options.drive_distance}, file);
  h5::write_attr(g.get(), "measure_step", int64_t{p.options.measure_step}, file);
  h5::write_attr(g.get(), "order", std::string(to_string(p.options.order)), file);
  h5::write_attr(g.get(), "measure_on_driven", int64_t{p.options.measure_on_driven ? 1 : 0}, file);
  std::vector<int32_t> drives, meas;
  for (const Drive& d : p.drives) drives.insert(drives.end(), {d.source, d.sink});
  for (const Measurement& m : p.measurements)
    meas.insert(meas.end(), {m.drive, m.positive, m.negative});
  h5::write_int32(g.get(), "drives", drives.data(), {p.drives.size(), 2}, file);
  h5::write_int32(g.get(), "measurements", meas.data(), {p.measurements.size(), 3}, file);
}

void write_geometry(hid_t root, const Model& m, const std::string& file) {
  h5::Handle g = h5::create_group(root, "geometry", file);
  if (const auto* mesh = std::get_if<MeshGeometry>(&m.geometry)) {
    h5::write_attr(g.get(), "kind", std::string("mesh"), file);
    h5::write_attr(
        g.get(), "output_on",
        std::string(mesh->output_on == MeshGeometry::OutputOn::kElements ? "elements" : "nodes"),
        file);
    const auto n = static_cast<hsize_t>(mesh->nodes.rows());
    const auto e = static_cast<hsize_t>(mesh->elements.rows());
    // 2-D: nodes n × 2, triangles m × 3; 3-D: nodes n × 3, tetrahedra m × 4 (row-major storage).
    h5::write_float64(g.get(), "nodes", mesh->nodes.data(),
                      {n, static_cast<hsize_t>(mesh->nodes.cols())}, file);
    h5::write_int32(g.get(), "elements", mesh->elements.data(),
                    {e, static_cast<hsize_t>(mesh->elements.cols())}, file);
    h5::write_int32(g.get(), "electrode_nodes", mesh->electrode_nodes.data(),
                    {mesh->electrode_nodes.size()}, file);
  } else {
    const auto& grid = std::get<GridGeometry>(m.geometry);
    h5::write_attr(g.get(), "kind", std::string("grid"), file);
    h5::write_attr(g.get(), "nx", int64_t{grid.nx}, file);
    h5::write_attr(g.get(), "ny", int64_t{grid.ny}, file);
    h5::write_attr(g.get(), "x0", grid.x0, file);
    h5::write_attr(g.get(), "y0", grid.y0, file);
    h5::write_attr(g.get(), "dx", grid.dx, file);
    h5::write_attr(g.get(), "dy", grid.dy, file);
    if (grid.nz > 1) {  // voxel grid: planes z ascending; a 2-D grid keeps its 2-D layout
      h5::write_attr(g.get(), "nz", int64_t{grid.nz}, file);
      h5::write_attr(g.get(), "z0", grid.z0, file);
      h5::write_attr(g.get(), "dz", grid.dz, file);
      h5::write_uint8(g.get(), "mask", grid.mask.data(),
                      {static_cast<hsize_t>(grid.nz), static_cast<hsize_t>(grid.ny),
                       static_cast<hsize_t>(grid.nx)},
                      file);
    } else {
      h5::write_uint8(g.get(), "mask", grid.mask.data(),
                      {static_cast<hsize_t>(grid.ny), static_cast<hsize_t>(grid.nx)}, file);
    }
  }
}

namespace {

// The option attributes of the open /protocol group `g`.
ProtocolOptions protocol_options(hid_t g, const std::string& where) {
  ProtocolOptions o;
  o.n_electrodes =
      static_cast<int>(h5::read_attr_int_in(g, "n_electrodes", 2, kMaxElectrodes, where));
  o.drive_distance = static_cast<int>(
      h5::read_attr_int_in(g, "drive_distance", -kMaxElectrodes, kMaxElectrodes, where));
  o.measure_step = static_cast<int>(
      h5::read_attr_int_in(g, "measure_step", -kMaxElectrodes, kMaxElectrodes, where));
  o.order = parse_measurement_order(h5::read_attr_string(g, "order", where));
  o.measure_on_driven = h5::read_attr_int(g, "measure_on_driven", where) != 0;
  return o;
}

}  // namespace

ProtocolOptions read_protocol_options(hid_t root, const std::string& file) {
  const std::string where = file + ": /protocol";
  return protocol_options(h5::open_group(root, "protocol", where).get(), where);
}

Protocol read_protocol(hid_t root, const std::string& file, hsize_t n_meas) {
  const std::string where = file + ": /protocol";
  const h5::Handle g = h5::open_group(root, "protocol", where);
  Protocol p;
  p.options = protocol_options(g.get(), where);
  p.n_electrodes = p.options.n_electrodes;
  const auto dd = h5::expect_shape(g.get(), "drives", where + "/drives", {0, 2}, "source, sink");
  h5::expect_shape(g.get(), "measurements", where + "/measurements", {n_meas, 3},
                   fmt::format("one row per column of H: drive, positive, negative"));
  const auto drives = h5::read_int32(g.get(), "drives", where + "/drives");
  const auto meas = h5::read_int32(g.get(), "measurements", where + "/measurements");
  for (size_t i = 0; i < dd[0]; ++i) p.drives.push_back({drives[2 * i], drives[2 * i + 1]});
  for (size_t i = 0; i < n_meas; ++i)
    p.measurements.push_back({meas[3 * i], meas[3 * i + 1], meas[3 * i + 2]});
  return p;
}

std::variant<MeshGeometry, GridGeometry> read_geometry(hid_t root, const std::string& file) {
  const std::string where = file + ": /geometry";
  h5::Handle g = h5::open_group(root, "geometry", where);
  const std::string kind = h5::read_attr_string(g.get(), "kind", where);
  if (kind == "mesh") {
    MeshGeometry mesh;
    const std::string on = h5::read_attr_string(g.get(), "output_on", where);
    if (on != "elements" && on != "nodes")
      throw std::runtime_error(
          fmt::format("{}: output_on '{}', expected 'elements' or 'nodes'", where, on));
    mesh.output_on =
        on == "elements" ? MeshGeometry::OutputOn::kElements : MeshGeometry::OutputOn::kNodes;
    const auto nd = h5::expect_shape(g.get(), "nodes", where + "/nodes", {0, 0}, "x, y[, z]");
    if (nd[1] != 2 && nd[1] != 3)
      throw std::runtime_error(
          fmt::format("{}/nodes: shape {}, expected any × 2 (x, y) or any × 3 (x, y, z)", where,
                      h5::shape_text(nd)));
    const auto ed = h5::expect_shape(
        g.get(), "elements", where + "/elements", {0, nd[1] + 1},
        nd[1] == 2 ? "triangles, as the nodes are 2-D" : "tetrahedra, as the nodes are 3-D");
    h5::expect_shape(g.get(), "electrode_nodes", where + "/electrode_nodes", {0},
                     "one per electrode");
    const auto nodes = h5::read_float64(g.get(), "nodes", where + "/nodes");
    const auto elems = h5::read_int32(g.get(), "elements", where + "/elements");
    mesh.nodes = Eigen::Map<const NodeMatrix>(nodes.data(), static_cast<Eigen::Index>(nd[0]),
                                              static_cast<Eigen::Index>(nd[1]));
    mesh.elements = Eigen::Map<const ElementMatrix>(elems.data(), static_cast<Eigen::Index>(ed[0]),
                                                    static_cast<Eigen::Index>(ed[1]));
    const auto el = h5::read_int32(g.get(), "electrode_nodes", where + "/electrode_nodes");
    mesh.electrode_nodes.assign(el.begin(), el.end());
    return mesh;
  }
  if (kind != "grid")
    throw std::runtime_error(fmt::format("{}: kind '{}', expected 'mesh' or 'grid'", where, kind));
  GridGeometry grid;
  grid.nx = static_cast<int>(h5::read_attr_int_in(g.get(), "nx", 1, kMaxGridSide, where));
  grid.ny = static_cast<int>(h5::read_attr_int_in(g.get(), "ny", 1, kMaxGridSide, where));
  grid.x0 = h5::read_attr_double(g.get(), "x0", where);
  grid.y0 = h5::read_attr_double(g.get(), "y0", where);
  grid.dx = h5::read_attr_double(g.get(), "dx", where);
  grid.dy = h5::read_attr_double(g.get(), "dy", where);
  if (h5::has_attr(g.get(), "nz")) {
    grid.nz = static_cast<int>(h5::read_attr_int_in(g.get(), "nz", 1, kMaxGridSide, where));
    grid.z0 = h5::read_attr_double(g.get(), "z0", where);
    grid.dz = h5::read_attr_double(g.get(), "dz", where);
  }
  if (grid.nz > 1)
    h5::expect_shape(g.get(), "mask", where + "/mask",
                     {static_cast<hsize_t>(grid.nz), static_cast<hsize_t>(grid.ny),
                      static_cast<hsize_t>(grid.nx)},
                     "nz × ny × nx");
  else
    h5::expect_shape(g.get(), "mask", where + "/mask",
                     {static_cast<hsize_t>(grid.ny), static_cast<hsize_t>(grid.nx)}, "ny × nx");
  grid.mask = h5::read_uint8(g.get(), "mask", where + "/mask");
  return grid;
}

void validate_geometry(const OutputGeometry& geometry, size_t n_out, const std::string& outputs,
                       int n_electrodes, const std::string& what) {
  auto bad = [&](const std::string& msg) { throw std::invalid_argument(what + ": " + msg); };
  if (const auto* g = std::get_if<MeshGeometry>(&geometry)) {
    const bool on_elems = g->output_on == MeshGeometry::OutputOn::kElements;
    const Eigen::Index expected = on_elems ? g->elements.rows() : g->nodes.rows();
    if (static_cast<Eigen::Index>(n_out) != expected)
      bad(fmt::format("{}, the mesh has {} {}", outputs, expected,
                      on_elems ? "elements" : "nodes"));
    if (g->elements.size() &&
        (g->elements.minCoeff() < 0 || g->elements.maxCoeff() >= g->nodes.rows()))
      bad(fmt::format("mesh elements index nodes {}..{}, expected 0..{}", g->elements.minCoeff(),
                      g->elements.maxCoeff(), g->nodes.rows() - 1));
    if (n_electrodes >= 0 && !g->electrode_nodes.empty() &&
        static_cast<int>(g->electrode_nodes.size()) != n_electrodes)
      bad(fmt::format("mesh has {} electrode nodes, protocol has {} electrodes",
                      g->electrode_nodes.size(), n_electrodes));
    for (int node : g->electrode_nodes)
      if (node < 0 || node >= g->nodes.rows())
        bad(fmt::format("electrode node {} out of range 0..{}", node, g->nodes.rows() - 1));
  } else {
    const auto& grid = std::get<GridGeometry>(geometry);
    if (grid.nx <= 0 || grid.ny <= 0 || grid.nz <= 0)
      bad(fmt::format("grid is {} × {} × {} (nx × ny × nz), expected positive sizes", grid.nx,
                      grid.ny, grid.nz));
    if (grid.n_pixels() != n_out)
      bad(grid.nz > 1 ? fmt::format("{}, the voxel grid has {} × {} × {} = {} voxels", outputs,
                                    grid.nz, grid.ny, grid.nx, grid.n_pixels())
                      : fmt::format("{}, the grid has {} × {} = {} pixels", outputs, grid.ny,
                                    grid.nx, grid.n_pixels()));
    if (grid.mask.size() != grid.n_pixels())
      bad(fmt::format("grid mask has {} values, expected {}", grid.mask.size(), grid.n_pixels()));
  }
}

}  // namespace eit::recon
