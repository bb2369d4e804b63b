// Model file reading and writing (layout: docs/formats.md, "Model file (.h5)").
#include "eit/recon/model_file.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/model_header.hpp"
#include "gn_model_file.hpp"
#include "hdf5_io.hpp"

namespace eit::recon {
namespace {

constexpr const char* kCreatedBy = "eitstream 0.1.0";

std::string shape_text(const std::vector<hsize_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += fmt::format("{}{}", i ? " × " : "", dims[i]);
  return dims.empty() ? "scalar" : s;
}

// Throws unless the dataset has exactly `expected` (a 0 entry matches any length).
std::vector<hsize_t> expect_shape(hid_t loc, const std::string& name, const std::string& where,
                                  const std::vector<hsize_t>& expected, const std::string& why) {
  const auto dims = h5::dataset_shape(loc, name, where);
  bool ok = dims.size() == expected.size();
  for (size_t i = 0; ok && i < dims.size(); ++i) ok = expected[i] == 0 || expected[i] == dims[i];
  if (!ok) {
    std::vector<std::string> parts;
    for (hsize_t e : expected) parts.push_back(e ? std::to_string(e) : "any");
    throw std::runtime_error(fmt::format("{}: shape {}, expected {} ({})", where, shape_text(dims),
                                         fmt::join(parts, " × "), why));
  }
  return dims;
}

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

Protocol read_protocol(hid_t root, const std::string& file, hsize_t n_meas) {
  const std::string where = file + ": /protocol";
  h5::Handle g = h5::open_group(root, "protocol", where);
  Protocol p;
  p.n_electrodes = static_cast<int>(h5::read_attr_int(g.get(), "n_electrodes", where));
  p.options.n_electrodes = p.n_electrodes;
  p.options.drive_distance = static_cast<int>(h5::read_attr_int(g.get(), "drive_distance", where));
  p.options.measure_step = static_cast<int>(h5::read_attr_int(g.get(), "measure_step", where));
  p.options.order = parse_measurement_order(h5::read_attr_string(g.get(), "order", where));
  p.options.measure_on_driven = h5::read_attr_int(g.get(), "measure_on_driven", where) != 0;
  const auto dd = expect_shape(g.get(), "drives", where + "/drives", {0, 2}, "source, sink");
  expect_shape(g.get(), "measurements", where + "/measurements", {n_meas, 3},
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
    const auto nd = expect_shape(g.get(), "nodes", where + "/nodes", {0, 0}, "x, y[, z]");
    if (nd[1] != 2 && nd[1] != 3)
      throw std::runtime_error(fmt::format(
          "{}/nodes: shape {}, expected any × 2 (x, y) or any × 3 (x, y, z)", where,
          shape_text(nd)));
    const auto ed = expect_shape(g.get(), "elements", where + "/elements", {0, nd[1] + 1},
                                 nd[1] == 2 ? "triangles, as the nodes are 2-D"
                                            : "tetrahedra, as the nodes are 3-D");
    expect_shape(g.get(), "electrode_nodes", where + "/electrode_nodes", {0}, "one per electrode");
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
  grid.nx = static_cast<int>(h5::read_attr_int(g.get(), "nx", where));
  grid.ny = static_cast<int>(h5::read_attr_int(g.get(), "ny", where));
  grid.x0 = h5::read_attr_double(g.get(), "x0", where);
  grid.y0 = h5::read_attr_double(g.get(), "y0", where);
  grid.dx = h5::read_attr_double(g.get(), "dx", where);
  grid.dy = h5::read_attr_double(g.get(), "dy", where);
  if (h5::has_attr(g.get(), "nz")) {
    grid.nz = static_cast<int>(h5::read_attr_int(g.get(), "nz", where));
    if (grid.nz < 1)
      throw std::runtime_error(fmt::format("{}: nz {}, expected at least 1", where, grid.nz));
    grid.z0 = h5::read_attr_double(g.get(), "z0", where);
    grid.dz = h5::read_attr_double(g.get(), "dz", where);
  }
  if (grid.nz > 1)
    expect_shape(g.get(), "mask", where + "/mask",
                 {static_cast<hsize_t>(grid.nz), static_cast<hsize_t>(grid.ny),
                  static_cast<hsize_t>(grid.nx)},
                 "nz × ny × nx");
  else
    expect_shape(g.get(), "mask", where + "/mask",
                 {static_cast<hsize_t>(grid.ny), static_cast<hsize_t>(grid.nx)}, "ny × nx");
  grid.mask = h5::read_uint8(g.get(), "mask", where + "/mask");
  return grid;
}

// H (chunked when large, hdf5_io.hpp) with its statistics as attributes, so `model info` can
// describe a 0.7 GB H without reading it. The attributes are not part of the content hash.
void write_h(hid_t root, const MatrixRowMajorF& H, const std::string& file) {
  h5::write_float32(root, "H", H.data(),
                    {static_cast<hsize_t>(H.rows()), static_cast<hsize_t>(H.cols())}, file);
  const h5::Handle set = h5::open_dataset(root, "H", file + ": /H");
  const MatrixStats st = matrix_stats(H);
  h5::write_attr(set.get(), "min", st.min, file);
  h5::write_attr(set.get(), "max", st.max, file);
  h5::write_attr(set.get(), "mean_abs", st.mean_abs, file);
  h5::write_attr(set.get(), "frobenius_norm", st.frobenius, file);
  h5::write_attr(set.get(), "zero_rows", st.zero_rows, file);
}

}  // namespace

void validate_model(const Model& m, const std::string& what) {
  if (m.gn) return detail::validate_gn_model(m, what);  // absolute imaging: no H
  auto bad = [&](const std::string& msg) { throw std::invalid_argument(what + ": " + msg); };
  const auto n_meas = static_cast<size_t>(m.H.cols());
  if (m.H.size() == 0)
    bad(fmt::format("H is {} × {}, expected a non-empty matrix", m.H.rows(), m.H.cols()));
  if (m.protocol.n_meas() != n_meas)
    bad(fmt::format("H has {} columns, protocol has {} measurements", n_meas, m.protocol.n_meas()));
  if (m.v_ref.size() != 0 && static_cast<size_t>(m.v_ref.size()) != n_meas)
    bad(fmt::format("v_ref has {} values, expected {} (H columns) or none", m.v_ref.size(),
                    n_meas));
  const int n_el = m.protocol.n_electrodes;
  const int n_drives = static_cast<int>(m.protocol.drives.size());
  for (size_t i = 0; i < m.protocol.drives.size(); ++i) {
    const Drive d = m.protocol.drives[i];
    if (d.source < 0 || d.source >= n_el || d.sink < 0 || d.sink >= n_el)
      bad(fmt::format("drive {} is {}→{}, expected electrodes in 0..{}", i, d.source, d.sink,
                      n_el - 1));
  }
  for (size_t i = 0; i < n_meas; ++i) {
    const Measurement x = m.protocol.measurements[i];
    if (x.drive < 0 || x.drive >= n_drives || x.positive < 0 || x.positive >= n_el ||
        x.negative < 0 || x.negative >= n_el)
      bad(
          fmt::format("measurement {} is (drive {}, {}, {}), expected drive in 0..{} and "
                      "electrodes in 0..{}",
                      i, x.drive, x.positive, x.negative, n_drives - 1, n_el - 1));
  }
  if (const auto* g = std::get_if<MeshGeometry>(&m.geometry)) {
    const auto n_out = static_cast<Eigen::Index>(m.H.rows());
    const bool on_elems = g->output_on == MeshGeometry::OutputOn::kElements;
    const Eigen::Index expected = on_elems ? g->elements.rows() : g->nodes.rows();
    if (n_out != expected)
      bad(fmt::format("H has {} rows, the mesh has {} {}", n_out, expected,
                      on_elems ? "elements" : "nodes"));
    if (g->elements.size() &&
        (g->elements.minCoeff() < 0 || g->elements.maxCoeff() >= g->nodes.rows()))
      bad(fmt::format("mesh elements index nodes {}..{}, expected 0..{}", g->elements.minCoeff(),
                      g->elements.maxCoeff(), g->nodes.rows() - 1));
    if (!g->electrode_nodes.empty() && static_cast<int>(g->electrode_nodes.size()) != n_el)
      bad(fmt::format("mesh has {} electrode nodes, protocol has {} electrodes",
                      g->electrode_nodes.size(), n_el));
    for (int node : g->electrode_nodes)
      if (node < 0 || node >= g->nodes.rows())
        bad(fmt::format("electrode node {} out of range 0..{}", node, g->nodes.rows() - 1));
  } else {
    const auto& grid = std::get<GridGeometry>(m.geometry);
    if (grid.nx <= 0 || grid.ny <= 0 || grid.nz <= 0)
      bad(fmt::format("grid is {} × {} × {} (nx × ny × nz), expected positive sizes", grid.nx,
                      grid.ny, grid.nz));
    if (static_cast<Eigen::Index>(grid.n_pixels()) != m.H.rows())
      bad(grid.nz > 1 ? fmt::format("H has {} rows, the voxel grid has {} × {} × {} = {} voxels",
                                    m.H.rows(), grid.nz, grid.ny, grid.nx, grid.n_pixels())
                      : fmt::format("H has {} rows, the grid has {} × {} = {} pixels", m.H.rows(),
                                    grid.ny, grid.nx, grid.n_pixels()));
    if (grid.mask.size() != grid.n_pixels())
      bad(fmt::format("grid mask has {} values, expected {}", grid.mask.size(), grid.n_pixels()));
  }
}

void save_model(const std::filesystem::path& path, Model& m) {
  const std::string file = path.string();
  validate_model(m, file);
  if (m.parameters_json.empty()) m.parameters_json = "{}";  // stored as written, hashed as stored
  m.id = model_content_hash(m);
  h5::QuietErrors quiet;
  h5::Handle f = h5::create_file(file);
  const hid_t root = f.get();
  if (m.gn)
    detail::write_gn(root, m, file);
  else
    write_h(root, m.H, file);
  if (m.v_ref.size() > 0)
    h5::write_float64(root, "v_ref", m.v_ref.data(), {static_cast<hsize_t>(m.v_ref.size())}, file);
  write_protocol(root, m.protocol, file);
  write_geometry(root, m, file);
  h5::write_attr(root, "algorithm", m.algorithm, file);
  h5::write_attr(root, "parameters", m.parameters_json, file);
  h5::write_attr(root, "normalize", int64_t{m.normalize ? 1 : 0}, file);
  h5::write_attr(root, "model_id", m.id, file);
  h5::write_attr(root, "format_version", int64_t{kModelFormatVersion}, file);
  h5::write_attr(root, "created_by", std::string(kCreatedBy), file);
  if (H5Fflush(root, H5F_SCOPE_GLOBAL) < 0)
    throw std::runtime_error(fmt::format("{}: cannot flush to disk", file));
}

namespace {

// Everything in the file but H's values (hd gets H's shape; for gn, 0 × n_meas). No validation.
Model read_all_but_h(hid_t root, const std::string& file, std::vector<hsize_t>& hd) {
  const std::string at_root = file + ": /";
  const int64_t version = h5::read_attr_int(root, "format_version", at_root);
  if (version != kModelFormatVersion)
    throw std::runtime_error(
        fmt::format("{}: format_version {}, expected {}", file, version, kModelFormatVersion));
  Model m;
  const bool gn = h5::exists(root, "gn");  // absolute imaging: settings instead of H
  hd = {0, 0};
  if (gn) {
    h5::Handle p = h5::open_group(root, "protocol", file + ": /protocol");
    hd[1] = expect_shape(p.get(), "measurements", file + ": /protocol/measurements", {0, 3},
                         "drive, positive, negative")[0];
  } else {
    hd = expect_shape(root, "H", file + ": /H", {0, 0}, "n_out × n_meas");
  }
  if (h5::exists(root, "v_ref")) {
    expect_shape(root, "v_ref", file + ": /v_ref", {hd[1]}, "one value per column of H");
    const auto v = h5::read_float64(root, "v_ref", file + ": /v_ref");
    m.v_ref = Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
  }
  m.protocol = read_protocol(root, file, hd[1]);
  m.geometry = read_geometry(root, file);
  m.algorithm = h5::read_attr_string(root, "algorithm", at_root);
  m.parameters_json = h5::read_attr_string(root, "parameters", at_root);
  m.normalize = h5::read_attr_int(root, "normalize", at_root) != 0;
  if (gn) {
    const auto* mesh = std::get_if<MeshGeometry>(&m.geometry);
    if (!mesh) throw std::runtime_error(fmt::format("{}: /gn needs the mesh geometry", file));
    m.gn = detail::read_gn(root, *mesh, file);
  }
  return m;
}

// Opens a model file for reading; throws naming it when it is missing or not HDF5.
h5::Handle open_model_file(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path))
    throw std::runtime_error(fmt::format("{}: model file not found", path.string()));
  return h5::open_file(path.string());
}

Model load_model_checked(const std::filesystem::path& path, std::string* stored_id) {
  const std::string file = path.string();
  h5::QuietErrors quiet;
  h5::Handle f = open_model_file(path);
  const hid_t root = f.get();
  std::vector<hsize_t> hd;
  Model m = read_all_but_h(root, file, hd);
  if (!m.gn) {  // straight into the matrix: no second 0.7 GB copy
    m.H.resize(static_cast<Eigen::Index>(hd[0]), static_cast<Eigen::Index>(hd[1]));
    h5::read_float32_into(root, "H", m.H.data(), static_cast<size_t>(m.H.size()), file + ": /H");
  }
  validate_model(m, file);
  m.id = model_content_hash(m);
  if (h5::has_attr(root, "model_id")) {
    const std::string stored = h5::read_attr_string(root, "model_id", file + ": /");
    if (stored_id) *stored_id = stored;
    if (stored != m.id && !stored_id)
      throw std::runtime_error(fmt::format(
          "{}: model_id {} does not match its content (hash {}): the file was changed after "
          "it was saved; re-save it with eitstream to give it a new id",
          file, stored, m.id));
  }
  return m;
}

}  // namespace

ModelHeader read_model_header(const std::filesystem::path& path) {
  const std::string file = path.string();
  h5::QuietErrors quiet;
  h5::Handle f = open_model_file(path);
  const hid_t root = f.get();
  ModelHeader h;
  std::vector<hsize_t> hd;
  h.model = read_all_but_h(root, file, hd);
  h.h_rows = static_cast<int64_t>(hd[0]);
  h.h_cols = static_cast<int64_t>(hd[1]);
  if (h5::has_attr(root, "model_id"))
    h.stored_id = h5::read_attr_string(root, "model_id", file + ": /");
  if (!h.model.gn) {
    const std::string where = file + ": /H";
    h.h_layout = h5::dataset_layout(root, "H", where);
    const h5::Handle set = h5::open_dataset(root, "H", where);
    if (h5::has_attr(set.get(), "frobenius_norm")) {  // written by save_model since chunking
      MatrixStats st;
      st.min = h5::read_attr_double(set.get(), "min", where);
      st.max = h5::read_attr_double(set.get(), "max", where);
      st.mean_abs = h5::read_attr_double(set.get(), "mean_abs", where);
      st.frobenius = h5::read_attr_double(set.get(), "frobenius_norm", where);
      st.zero_rows = h5::read_attr_int(set.get(), "zero_rows", where);
      h.h_stats = st;
    }
  }
  return h;
}

Model load_model(const std::filesystem::path& path) { return load_model_checked(path, nullptr); }

Model load_model_edited(const std::filesystem::path& path, std::string* stored_id) {
  std::string stored;
  Model m = load_model_checked(path, &stored);
  if (stored_id) *stored_id = stored;
  return m;
}

}  // namespace eit::recon
