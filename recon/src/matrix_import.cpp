#include "eit/recon/matrix_import.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/array_file.hpp"
#include "eit/recon/eidors_unpack.hpp"

namespace eit::recon {
namespace {

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    else
      out += c;
  }
  return out + "\"";
}

size_t output_count(const std::variant<MeshGeometry, GridGeometry>& g) {
  if (const auto* m = std::get_if<MeshGeometry>(&g))
    return static_cast<size_t>(
        m->output_on == MeshGeometry::OutputOn::kElements ? m->elements.rows() : m->nodes.rows());
  return std::get<GridGeometry>(g).n_pixels();
}

}  // namespace

GridGeometry centred_disc_grid(int n, double radius) {
  if (n < 2) throw std::invalid_argument(fmt::format("grid size {}, expected at least 2", n));
  GridGeometry g;
  g.nx = g.ny = n;
  g.dx = g.dy = 2 * radius / n;
  g.x0 = g.y0 = -radius + radius / n;
  g.mask.resize(static_cast<size_t>(n) * n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      const double x = g.x0 + c * g.dx, y = g.y0 + r * g.dy;
      g.mask[static_cast<size_t>(r) * n + c] = x * x + y * y > radius * radius ? 1 : 0;
    }
  return g;
}

Model import_matrix(const MatrixImportOptions& o) {
  const std::string file = o.file.string();
  const std::string ext = o.file.extension().string();
  DenseArray a;
  if (ext == ".npy")
    a = read_npy(o.file);
  else if (ext == ".mat")
    a = read_mat_variable(o.file, o.variable);
  else
    throw std::invalid_argument(
        fmt::format("{}: extension '{}', expected .npy or .mat", file, ext));
  if (a.shape.size() != 2)
    throw std::runtime_error(
        fmt::format("{}: array has {} dimensions, expected a 2-D matrix", file, a.shape.size()));
  if (a.is_complex())
    throw std::runtime_error(fmt::format("{}: complex matrix, expected real values", file));
  Eigen::MatrixXd m =
      Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
          a.real.data(), static_cast<Eigen::Index>(a.shape[0]),
          static_cast<Eigen::Index>(a.shape[1]));

  const bool packed_shape = m.rows() == kEidorsPackedRows && m.cols() == kEidorsPackedCols;
  const bool unpack = o.unpack == MatrixImportOptions::Unpack::kYes ||
                      (o.unpack == MatrixImportOptions::Unpack::kAuto && packed_shape);
  if (unpack) {
    // The packed matrix's 208 columns are EIDORS' adjacent 16-electrode protocol in std order;
    // another protocol with 208 measurements would silently relabel them.
    const ProtocolOptions& p = o.protocol;
    if (p.n_electrodes != 16 || p.drive_distance != 1 || p.measure_step != 1 ||
        p.order != MeasurementOrder::kStd || p.measure_on_driven)
      throw std::invalid_argument(fmt::format(
          "{}: the packed EIDORS GREIT matrix is for 16 electrodes, drive distance 1, measure "
          "step 1, std order, no measurements on driven electrodes; the options give {} "
          "electrodes, drive distance {}, measure step {}, {} order{}",
          file, p.n_electrodes, p.drive_distance, p.measure_step,
          p.order == MeasurementOrder::kStd ? "std" : "rotate_meas",
          p.measure_on_driven ? ", measurements on driven electrodes" : ""));
    m = unpack_eidors_greit(m);
  }

  Model model;
  model.protocol = make_protocol(o.protocol);
  model.geometry = o.geometry;
  model.normalize = o.normalize;
  const auto n_meas = static_cast<Eigen::Index>(model.protocol.n_meas());
  const auto n_out = static_cast<Eigen::Index>(output_count(o.geometry));
  bool transposed = false;
  if (m.rows() == n_meas && m.cols() == n_out && n_meas != n_out) {
    Eigen::MatrixXd t(m.cols(), m.rows());  // element loop: Eigen's AVX-512 transpose trips -Wall
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j) t(j, i) = m(i, j);
    m.swap(t);
    transposed = true;
  }
  if (m.rows() != n_out || m.cols() != n_meas)
    throw std::runtime_error(fmt::format(
        "{}: matrix is {} × {}{}, expected {} × {} (outputs of the geometry × measurements of "
        "the protocol)",
        file, m.rows(), m.cols(), unpack ? " after EIDORS unpacking" : "", n_out, n_meas));
  model.H.resize(n_out, n_meas);
  for (Eigen::Index i = 0; i < n_out; ++i)
    for (Eigen::Index j = 0; j < n_meas; ++j) model.H(i, j) = static_cast<float>(o.scale * m(i, j));
  // A NaN or infinity in H turns every image into NaN (or ±inf) pixels: refuse it here.
  for (Eigen::Index i = 0; i < n_out; ++i)
    for (Eigen::Index j = 0; j < n_meas; ++j)
      if (!std::isfinite(model.H(i, j)))
        throw std::runtime_error(fmt::format(
            "{}: H[{}, {}] is {} (value {} × scale {}), expected a finite float", file, i, j,
            model.H(i, j), m(transposed ? j : i, transposed ? i : j), o.scale));
  model.algorithm = "imported";
  model.parameters_json = fmt::format(
      R"({{"source":{},"variable":{},"unpacked_eidors_symmetry":{},"transposed":{},"scale":{}}})",
      json_quote(o.file.filename().string()), json_quote(o.variable), unpack, transposed, o.scale);
  return model;
}

}  // namespace eit::recon
