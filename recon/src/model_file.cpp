// Model file reading and writing (layout: docs/formats.md, "Model file (.h5)").
#include "eit/recon/model_file.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "eit/recon/hdf5_io.hpp"
#include "eit/recon/model_groups.hpp"
#include "eit/recon/model_header.hpp"
#include "gn_model_file.hpp"

namespace eit::recon {
namespace {

constexpr const char* kCreatedBy = "eitstream 0.1.0";

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
  // A matrix that cannot give an image (an option that overflowed its regularisation, a scale
  // of 0) is refused here, where every build, import, rehash and load passes.
  if (!m.H.allFinite())  // row-major: element k is H[k / cols, k % cols]
    for (Eigen::Index k = 0; k < m.H.size(); ++k)
      if (!std::isfinite(m.H.data()[k]))
        bad(fmt::format("H[{}, {}] is {}, expected finite values", k / m.H.cols(), k % m.H.cols(),
                        m.H.data()[k]));
  if ((m.H.array() == 0.0f).all()) bad("H is all zero: it would give a blank image for any frame");
  for (Eigen::Index i = 0; i < m.v_ref.size(); ++i)
    if (!std::isfinite(m.v_ref(i)))
      bad(fmt::format("v_ref[{}] is {}, expected finite", i, m.v_ref(i)));
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
  validate_geometry(m.geometry, static_cast<size_t>(m.H.rows()),
                    fmt::format("H has {} rows", m.H.rows()), n_el, what);
}

namespace {

void write_model_file(const std::string& path, const std::string& file, const Model& m) {
  h5::QuietErrors quiet;
  h5::Handle f = h5::create_file(path);
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
  f = h5::Handle();  // closed before the rename
}

}  // namespace

void check_output_folder(const std::filesystem::path& path) {
  const std::filesystem::path folder = path.parent_path();
  std::error_code ec;
  if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
    throw std::runtime_error(
        fmt::format("{}: the folder {} does not exist", path.string(), folder.string()));
}

void save_model(const std::filesystem::path& path, Model& m) {
  const std::string file = path.string();
  validate_model(m, file);
  check_output_folder(path);
  if (m.parameters_json.empty()) m.parameters_json = "{}";  // stored as written, hashed as stored
  m.id = model_content_hash(m);
  // Written beside the target and renamed over it once whole: a failure (a full disk) leaves
  // neither a partial model nor a damaged earlier one under that name.
  const std::string partial = fmt::format("{}.partial-{}", file, ::getpid());
  try {
    write_model_file(partial, file, m);
    std::filesystem::rename(partial, path);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    throw;
  }
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
    hd[1] = h5::expect_shape(p.get(), "measurements", file + ": /protocol/measurements", {0, 3},
                             "drive, positive, negative")[0];
  } else {
    hd = h5::expect_shape(root, "H", file + ": /H", {0, 0}, "n_out × n_meas");
  }
  if (h5::exists(root, "v_ref")) {
    h5::expect_shape(root, "v_ref", file + ": /v_ref", {hd[1]}, "one value per column of H");
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
