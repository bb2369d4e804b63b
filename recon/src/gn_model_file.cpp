// "gn" models: building them and their /gn group in the Model file.
#include "gn_model_file.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/gn_model.hpp"
#include "eit/recon/mesh_check.hpp"
#include "model_assembly.hpp"

namespace eit::recon {

std::string gn_parameters_json(const GnSetup& s) {
  const GnOptions& o = s.options;
  using detail::json_number;
  std::string start = fmt::format(R"("{}")", to_string(o.start));
  if (o.start == GnOptions::Start::kScalar)
    start = fmt::format(R"({{"kind": "scalar", "value": {}}})", json_number(o.start_value));
  else if (o.start == GnOptions::Start::kPerElement)
    start = fmt::format(R"({{"kind": "element", "values": [{}]}})",
                        fmt::join(o.start_perm.begin(), o.start_perm.end(), ", "));
  std::string patches;
  for (const auto& p : s.mesh.electrode_patches)
    patches += fmt::format("{}[{}]", patches.empty() ? "" : ", ", fmt::join(p, ", "));
  return fmt::format(
      R"({{"prior": "{}", "p": {}, "lambda0": {}, "lambda_decay": {}, "lambda_min": {}, )"
      R"("iterations": {}, "tolerance": {}, "start": {}, "pyeit_compat": {}, )"
      R"("frame_iterations": {}, "ref_node": {}, "electrode_patches": [{}], {}}})",
      to_string(o.prior), json_number(o.p), json_number(o.lambda0), json_number(o.lambda_decay),
      json_number(o.lambda_min), o.max_iterations, json_number(o.tolerance), start,
      o.pyeit_compat ? "true" : "false", o.frame_iterations, s.mesh.ref_node, patches,
      // "complex" only when set, so the ids of real models stay what they were.
      detail::forward_json(s.forward) + (o.complex_conductivity ? R"(, "complex": true)" : ""));
}

Model make_gn_model(const Mesh& mesh, const Protocol& protocol, const ForwardOptions& forward,
                    const GnOptions& options) {
  check_mesh(mesh, "gn model mesh");
  validate_gn_options(options, mesh.n_elems());
  Model m;
  m.algorithm = "gn";
  m.protocol = protocol;
  MeshGeometry g;
  g.nodes = mesh.nodes;
  g.elements = mesh.elements;
  g.electrode_nodes = mesh.electrode_nodes;
  g.output_on = MeshGeometry::OutputOn::kElements;
  m.geometry = std::move(g);
  m.gn = GnSetup{mesh, forward, options};
  m.parameters_json = gn_parameters_json(*m.gn);
  detail::validate_gn_model(m, "gn model");
  return m;
}

namespace detail {

void validate_gn_model(const Model& m, const std::string& what) {
  auto bad = [&](const std::string& msg) { throw std::invalid_argument(what + ": " + msg); };
  const GnSetup& s = *m.gn;
  if (m.algorithm != "gn")
    bad(fmt::format("algorithm '{}' with /gn settings, expected 'gn'", m.algorithm));
  if (m.H.size() != 0)
    bad(fmt::format("H is {} × {}, a gn model has none", m.H.rows(), m.H.cols()));
  if (m.protocol.n_electrodes != s.mesh.n_electrodes())
    bad(fmt::format("protocol has {} electrodes, the mesh has {}", m.protocol.n_electrodes,
                    s.mesh.n_electrodes()));
  if (m.protocol.n_meas() == 0) bad("the protocol has no measurements");
  for (const Measurement& x : m.protocol.measurements)
    if (x.drive < 0 || x.drive >= static_cast<int>(m.protocol.drives.size()) || x.positive < 0 ||
        x.positive >= m.protocol.n_electrodes || x.negative < 0 ||
        x.negative >= m.protocol.n_electrodes)
      bad(fmt::format("measurement (drive {}, {}, {}) out of range", x.drive, x.positive,
                      x.negative));
  for (const Drive& d : m.protocol.drives)
    if (d.source < 0 || d.source >= m.protocol.n_electrodes || d.sink < 0 ||
        d.sink >= m.protocol.n_electrodes)
      bad(fmt::format("drive {}→{} out of range", d.source, d.sink));
  if (m.v_ref.size() != 0) bad("v_ref is set; absolute imaging uses none");
  const auto* g = std::get_if<MeshGeometry>(&m.geometry);
  if (!g || g->output_on != MeshGeometry::OutputOn::kElements)
    bad("geometry must be the mesh with output on elements");
  if (g->nodes.rows() != s.mesh.nodes.rows() || g->elements.rows() != s.mesh.elements.rows())
    bad("geometry and the gn mesh differ");
  if (s.mesh.ref_node < 0 || s.mesh.ref_node >= s.mesh.n_nodes())
    bad(fmt::format("ref_node {} out of range 0..{}", s.mesh.ref_node, s.mesh.n_nodes() - 1));
  try {
    check_mesh(s.mesh, what + " mesh");
    validate_gn_options(s.options, s.mesh.n_elems());
  } catch (const std::invalid_argument& e) {
    bad(e.what());
  }
}

void write_gn(hid_t root, const Model& m, const std::string& file) {
  const GnSetup& s = *m.gn;
  const GnOptions& o = s.options;
  h5::Handle g = h5::create_group(root, "gn", file);
  h5::write_attr(g.get(), "prior", std::string(to_string(o.prior)), file);
  h5::write_attr(g.get(), "p", o.p, file);
  h5::write_attr(g.get(), "lambda0", o.lambda0, file);
  h5::write_attr(g.get(), "lambda_decay", o.lambda_decay, file);
  h5::write_attr(g.get(), "lambda_min", o.lambda_min, file);
  h5::write_attr(g.get(), "iterations", int64_t{o.max_iterations}, file);
  h5::write_attr(g.get(), "tolerance", o.tolerance, file);
  h5::write_attr(g.get(), "start", std::string(to_string(o.start)), file);
  h5::write_attr(g.get(), "start_value", o.start_value, file);
  h5::write_attr(g.get(), "pyeit_compat", int64_t{o.pyeit_compat ? 1 : 0}, file);
  h5::write_attr(g.get(), "frame_iterations", int64_t{o.frame_iterations}, file);
  h5::write_attr(g.get(), "complex", int64_t{o.complex_conductivity ? 1 : 0}, file);
  h5::write_attr(g.get(), "ref_node", int64_t{s.mesh.ref_node}, file);
  const bool cem = s.forward.electrodes == ForwardOptions::Electrodes::kComplete;
  h5::write_attr(g.get(), "electrodes", std::string(cem ? "complete" : "point"), file);
  h5::write_attr(g.get(), "contact_impedance", s.forward.contact_impedance, file);
  h5::write_attr(g.get(), "electrode_width", s.forward.electrode_width, file);
  if (o.start == GnOptions::Start::kPerElement)
    h5::write_float64(g.get(), "start_perm", o.start_perm.data(),
                      {static_cast<hsize_t>(o.start_perm.size())}, file);
  if (!s.mesh.electrode_patches.empty()) {  // CSR: offsets (n_el + 1) and the nodes
    std::vector<int32_t> offsets{0}, nodes;
    for (const auto& p : s.mesh.electrode_patches) {
      nodes.insert(nodes.end(), p.begin(), p.end());
      offsets.push_back(static_cast<int32_t>(nodes.size()));
    }
    h5::write_int32(g.get(), "patch_offsets", offsets.data(), {offsets.size()}, file);
    h5::write_int32(g.get(), "patch_nodes", nodes.data(), {nodes.size()}, file);
  }
}

GnSetup read_gn(hid_t root, const MeshGeometry& geometry, const std::string& file) {
  const std::string where = file + ": /gn";
  h5::Handle g = h5::open_group(root, "gn", where);
  GnSetup s;
  s.mesh.nodes = geometry.nodes;
  s.mesh.elements = geometry.elements;
  s.mesh.electrode_nodes = geometry.electrode_nodes;
  s.mesh.ref_node = static_cast<int>(h5::read_attr_int(g.get(), "ref_node", where));
  GnOptions& o = s.options;
  try {
    o.prior = parse_gn_prior(h5::read_attr_string(g.get(), "prior", where));
    o.start = parse_gn_start(h5::read_attr_string(g.get(), "start", where));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format("{}: {}", where, e.what()));
  }
  o.p = h5::read_attr_double(g.get(), "p", where);
  o.lambda0 = h5::read_attr_double(g.get(), "lambda0", where);
  o.lambda_decay = h5::read_attr_double(g.get(), "lambda_decay", where);
  o.lambda_min = h5::read_attr_double(g.get(), "lambda_min", where);
  o.max_iterations = static_cast<int>(h5::read_attr_int(g.get(), "iterations", where));
  o.tolerance = h5::read_attr_double(g.get(), "tolerance", where);
  o.start_value = h5::read_attr_double(g.get(), "start_value", where);
  o.pyeit_compat = h5::read_attr_int(g.get(), "pyeit_compat", where) != 0;
  o.frame_iterations = static_cast<int>(h5::read_attr_int(g.get(), "frame_iterations", where));
  // Absent in files written before complex conductivity: real.
  o.complex_conductivity =
      h5::has_attr(g.get(), "complex") && h5::read_attr_int(g.get(), "complex", where) != 0;
  const std::string electrodes = h5::read_attr_string(g.get(), "electrodes", where);
  if (electrodes != "point" && electrodes != "complete")
    throw std::runtime_error(
        fmt::format("{}: electrodes '{}', expected 'point' or 'complete'", where, electrodes));
  s.forward.electrodes = electrodes == "complete" ? ForwardOptions::Electrodes::kComplete
                                                  : ForwardOptions::Electrodes::kPoint;
  s.forward.contact_impedance = h5::read_attr_double(g.get(), "contact_impedance", where);
  s.forward.electrode_width = h5::read_attr_double(g.get(), "electrode_width", where);
  if (h5::exists(g.get(), "start_perm")) {
    const auto v = h5::read_float64(g.get(), "start_perm", where + "/start_perm");
    o.start_perm = Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
  }
  if (h5::exists(g.get(), "patch_offsets")) {
    const auto offsets = h5::read_int32(g.get(), "patch_offsets", where + "/patch_offsets");
    const auto nodes = h5::read_int32(g.get(), "patch_nodes", where + "/patch_nodes");
    for (size_t l = 0; l + 1 < offsets.size(); ++l) {
      if (offsets[l] < 0 || offsets[l + 1] < offsets[l] ||
          static_cast<size_t>(offsets[l + 1]) > nodes.size())
        throw std::runtime_error(
            fmt::format("{}/patch_offsets: entry {} = {} out of order or "
                        "past the {} patch nodes",
                        where, l + 1, offsets[l + 1], nodes.size()));
      s.mesh.electrode_patches.emplace_back(nodes.begin() + offsets[l],
                                            nodes.begin() + offsets[l + 1]);
    }
  }
  return s;
}

}  // namespace detail
}  // namespace eit::recon
