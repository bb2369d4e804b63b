// libFuzzer target: recon's Model file reader (load_model, and read_model_header) on well-formed
// HDF5 files whose content the input decides, starting from a valid Model file's layout
// (docs/formats.md): each attribute, dataset and group is kept, left out or given another type,
// shape or values (fuzzed_hdf5.hpp). Raw bytes are not fed to libhdf5: they fuzz its parsing of
// corrupted metadata, not our validation (docs/fuzzing.md). What must hold: a returned model's H
// is n_out × n_meas and passes validate_model; read_model_header agrees with it; the same file
// with its content id stored loads to the same id, and with another id does not load; every HDF5
// object the reader opened is closed again, whether it returned or threw.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include <H5Epublic.h>

#include "eit/recon/gn_options.hpp"
#include "eit/recon/model_file.hpp"
#include "eit/recon/model_header.hpp"
#include "fuzz_support.hpp"
#include "fuzzed_hdf5.hpp"
#include "fuzzed_model_groups.hpp"

namespace {

using eit::fuzz::FuzzedHdf5;
using eit::fuzz::H5Value;
namespace h5 = eit::recon::h5;

// The layouts a valid file can have: which geometry, and H or the /gn settings.
enum Template { kGrid, kVoxels, kMeshNodes, kMeshElements, kGn, kTemplates };

// gn models are meshes with output on the elements.
eit::fuzz::GeometryKind geometry_of(Template t) {
  return t == kGrid        ? eit::fuzz::kGridGeometry
         : t == kVoxels    ? eit::fuzz::kVoxelGeometry
         : t == kMeshNodes ? eit::fuzz::kMeshOnNodes
                           : eit::fuzz::kMeshOnElements;
}

void write_gn(FuzzedHdf5& f, hid_t root) {
  const h5::Handle g = f.group(root, "gn");
  if (!g.valid()) return;
  const eit::recon::GnOptions o;
  f.attribute(g.get(), "prior", H5Value::string(std::string(to_string(o.prior))));
  f.attribute(g.get(), "start", H5Value::string(std::string(to_string(o.start))));
  for (const auto& [name, v] :
       std::initializer_list<std::pair<const char*, double>>{{"p", o.p},
                                                             {"lambda0", o.lambda0},
                                                             {"lambda_decay", o.lambda_decay},
                                                             {"lambda_min", o.lambda_min},
                                                             {"tolerance", o.tolerance},
                                                             {"start_value", o.start_value},
                                                             {"contact_impedance", 0.01},
                                                             {"electrode_width", 0.1}})
    f.attribute(g.get(), name, H5Value::real(v));
  f.attribute(g.get(), "iterations", H5Value::integer(o.max_iterations));
  f.attribute(g.get(), "frame_iterations", H5Value::integer(o.frame_iterations));
  f.attribute(g.get(), "pyeit_compat", H5Value::integer(0));
  f.optional_attribute(g.get(), "complex", H5Value::integer(0));
  f.attribute(g.get(), "ref_node", H5Value::integer(0));
  f.attribute(g.get(), "electrodes", H5Value::string("point"));
  if (f.input().ConsumeBool())
    f.dataset(g.get(), "start_perm", H5Value::array(H5Value::kF64, {2}, {1.0, 1.0}));
  if (f.input().ConsumeBool()) {
    f.dataset(g.get(), "patch_offsets", H5Value::array(H5Value::kI32, {5}, {0, 1, 2, 3, 4}));
    f.dataset(g.get(), "patch_nodes", H5Value::array(H5Value::kI32, {4}, {0, 1, 2, 3}));
  }
}

// Writes the file; returns whether the input asked for the content id to be stored (checked
// once the file loads, when the id is known).
bool write_model(FuzzedDataProvider& in, const std::string& path) {
  FuzzedHdf5 f(in, {"grid",        "mesh",   "nodes", "elements",  "std",
                    "rotate_meas", "bp",     "jac",   "greit",     "imported",
                    "gn",          "{}",     "kotre", "laplacian", "scalar",
                    "element",     "fitted", "point", "complete",  ""});
  const auto t = Template(in.ConsumeIntegralInRange<int>(0, kTemplates - 1));
  const h5::Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) std::abort();
  const hid_t root = file.get();
  const size_t n_out = eit::fuzz::geometry_outputs(geometry_of(t));
  f.attribute(root, "format_version", H5Value::integer(eit::recon::kModelFormatVersion));
  f.attribute(root, "algorithm", H5Value::string(t == kGn ? "gn" : "bp"));
  f.attribute(root, "parameters", H5Value::string("{}"));
  f.attribute(root, "normalize", H5Value::integer(0));
  f.attribute(root, "created_by", H5Value::string("eitstream fuzz"));
  if (t == kGn) {
    write_gn(f, root);
  } else {
    std::vector<double> h(n_out * 3);
    for (size_t i = 0; i < h.size(); ++i) h[i] = 0.25 * double(i) - 1.0;
    f.dataset(root, "H", H5Value::array(H5Value::kF32, {n_out, 3}, h));
    const h5::Handle set(H5Dopen2(root, "H", H5P_DEFAULT), H5Dclose);
    if (set.valid() && in.ConsumeBool()) {  // H's statistics, read by read_model_header only
      for (const char* a : {"min", "max", "mean_abs", "frobenius_norm"})
        f.attribute(set.get(), a, H5Value::real(1.0));
      f.attribute(set.get(), "zero_rows", H5Value::integer(0));
    }
    if (in.ConsumeBool()) f.dataset(root, "v_ref", H5Value::array(H5Value::kF64, {3}, {1, 2, 3}));
  }
  // 2 drives and 3 measurements: H's columns (the reader takes the tables as stored).
  write_protocol(f, root, {4, 1, 1, "std", false, {0, 1, 2, 3}, {0, 2, 3, 1, 0, 1, 1, 1, 2}});
  write_geometry(f, root, geometry_of(t));
  if (!in.ConsumeBool()) return false;
  if (in.ConsumeBool()) f.attribute(root, "model_id", H5Value::string("0123456789abcdef"));
  return true;
}

void store_id(const std::string& path, const std::string& id) {
  const h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) std::abort();
  if (H5Aexists(file.get(), "model_id") > 0) H5Adelete(file.get(), "model_id");
  h5::write_attr(file.get(), "model_id", id, path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static eit::fuzz::InputFile file("fuzz.h5");
  static const bool quiet = [] { return H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0; }();
  (void)quiet;
  FuzzedDataProvider in(data, size);
  const std::string path = file.path().string();
  const bool id_round_trip = write_model(in, path);
  eit::fuzz::check_nothing_open("after writing the file");
  eit::recon::Model m;
  try {
    m = eit::recon::load_model(path);
  } catch (const std::exception&) {
    eit::fuzz::check_nothing_open("after load_model threw");
    return 0;
  }
  eit::fuzz::check_nothing_open("after load_model");
  if (static_cast<size_t>(m.H.rows()) != (m.gn ? 0 : m.n_out()) ||
      static_cast<size_t>(m.H.cols()) != (m.gn ? 0 : m.n_meas()))
    std::abort();
  eit::recon::validate_model(m, "loaded");  // throws (and the fuzzer reports it) if not valid
  try {  // it also reads H's statistics attributes, which load_model does not: it may refuse
    const eit::recon::ModelHeader h = eit::recon::read_model_header(path);
    if (h.model.protocol.n_meas() != m.protocol.n_meas() ||
        (!m.gn && (h.h_rows != m.H.rows() || h.h_cols != m.H.cols())))
      std::abort();
  } catch (const std::runtime_error&) {
  }
  eit::fuzz::check_nothing_open("after read_model_header");
  if (id_round_trip) {
    store_id(path, m.id);
    if (eit::recon::load_model(path).id != m.id) std::abort();
    std::string other = m.id;
    other[0] = other[0] == '0' ? '1' : '0';
    store_id(path, other);
    try {
      (void)eit::recon::load_model(path);
      std::abort();  // an id that does not match the content must be refused
    } catch (const std::runtime_error&) {
    }
  }
  eit::fuzz::check_nothing_open("after the model id round trip");
  return 0;
}
