#include "gn_forward.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/mesh_check.hpp"
#include "fem_assembly.hpp"
#include "gn_dense.hpp"

namespace eit::recon::detail {

template <class Scalar>
GnForwardT<Scalar>::GnForwardT(const Mesh& mesh, const Protocol& protocol,
                               const ForwardOptions& options)
    : mesh_(mesh), protocol_(protocol) {
  check_mesh(mesh, "gn forward model mesh");
  if (mesh.elements.cols() != 3)
    throw std::invalid_argument(fmt::format(
        "gn: the mesh has {}-node elements; Gauss–Newton absolute imaging is 2-D (triangles) only",
        mesh.elements.cols()));
  if (protocol.n_electrodes != mesh.n_electrodes())
    throw std::invalid_argument(fmt::format("gn: protocol has {} electrodes, mesh has {}",
                                            protocol.n_electrodes, mesh.n_electrodes()));
  const bool cem = options.electrodes == ForwardOptions::Electrodes::kComplete;
  const ElementGeometry g = element_geometry(mesh);
  ElectrodeSegments segments;
  if (cem) {
    if (!(options.contact_impedance > 0))
      throw std::invalid_argument(
          fmt::format("gn: contact impedance {} must be > 0", options.contact_impedance));
    segments = electrode_segments(mesh, options.electrode_width);
    for (int l = 0; l < mesh.n_electrodes(); ++l) electrode_row_.push_back(mesh.n_nodes() + l);
  } else {
    electrode_row_ = mesh.electrode_nodes;
  }
  const int n_e = mesh.n_elems();
  // σ = 0 keeps every element entry as an explicit zero, so base_ has the full pattern.
  base_ = assemble_system(mesh, g, Eigen::VectorXd::Zero(n_e), segments, options.contact_impedance,
                          /*grounded=*/true)
              .template cast<Scalar>();
  base_.makeCompressed();
  matrix_ = base_;
  sx_ = g.grad[0];  // triangles: the edges opposite each node, w = 1/(4A)
  sy_ = g.grad[1];
  inv4a_ = g.weight.array();
  scatter_.resize(n_e, 9);
  local_.resize(n_e, 9);
  const int ref = mesh.ref_node;
  for (int e = 0; e < n_e; ++e)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        const int r = mesh.elements(e, i), c = mesh.elements(e, j), k = 3 * i + j;
        local_(e, k) = (sx_(e, i) * sx_(e, j) + sy_(e, i) * sy_(e, j)) * inv4a_(e);
        scatter_(e, k) = -1;
        if (r == ref || c == ref) continue;
        const int* begin = base_.innerIndexPtr() + base_.outerIndexPtr()[c];
        const int* end = base_.innerIndexPtr() + base_.outerIndexPtr()[c + 1];
        const int* hit = std::lower_bound(begin, end, r);
        scatter_(e, k) = static_cast<int>(hit - base_.innerIndexPtr());
      }
  factor_.analyzePattern(base_);
  rhs_ = Matrix::Zero(base_.rows(), mesh.n_electrodes());
  for (int l = 0; l < mesh.n_electrodes(); ++l) rhs_(electrode_row_[static_cast<size_t>(l)], l) = 1;
}

template <class Scalar>
bool GnForwardT<Scalar>::set_conductivity(const Vector& sigma) {
  Scalar* values = matrix_.valuePtr();
  std::copy(base_.valuePtr(), base_.valuePtr() + base_.nonZeros(), values);
  for (Eigen::Index e = 0; e < sigma.size(); ++e)
    for (int k = 0; k < 9; ++k)
      if (scatter_(e, k) >= 0) values[scatter_(e, k)] += sigma(e) * local_(e, k);
  factor_.factorize(matrix_);
  if (factor_.info() != Eigen::Success) return false;
  if constexpr (std::is_same_v<Scalar, double>)
    fields_ = solve_many(factor_, rhs_);  // one sweep of the factor for all electrodes
  else
    fields_ = factor_.solve(rhs_);
  return fields_.allFinite();
}

template <class Scalar>
void GnForwardT<Scalar>::measurements(Vector& v) const {
  v.resize(static_cast<Eigen::Index>(protocol_.n_meas()));
  const auto z = [&](int row_el, int col_el) {
    return fields_(electrode_row_[static_cast<size_t>(row_el)], col_el);
  };
  for (size_t k = 0; k < protocol_.n_meas(); ++k) {
    const Measurement& m = protocol_.measurements[k];
    const Drive& d = protocol_.drives[static_cast<size_t>(m.drive)];
    v(static_cast<Eigen::Index>(k)) = (z(m.positive, d.source) - z(m.positive, d.sink)) -
                                      (z(m.negative, d.source) - z(m.negative, d.sink));
  }
}

template <class Scalar>
void GnForwardT<Scalar>::jacobian_transposed(Matrix& jt, std::span<const JacobianRow> rows,
                                             int threads) const {
  const int n_e = mesh_.n_elems(), n_el = mesh_.n_electrodes();
  using RowMajor = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const RowMajor xr = fields_.topRows(mesh_.n_nodes());
  // Rotated gradient (×2A) of every electrode field per element: G = Σ_i x(n_i) s_i.
  RowMajor gxr(n_e, n_el), gyr(n_e, n_el);
  for (int e = 0; e < n_e; ++e) {
    const auto a = xr.row(mesh_.elements(e, 0)), b = xr.row(mesh_.elements(e, 1)),
               c = xr.row(mesh_.elements(e, 2));
    gxr.row(e) = sx_(e, 0) * a + sx_(e, 1) * b + sx_(e, 2) * c;
    gyr.row(e) = sy_(e, 0) * a + sy_(e, 1) * b + sy_(e, 2) * c;
  }
  const Matrix gx = gxr, gy = gyr;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  const Array inv4a = inv4a_.template cast<Scalar>();
  // Jᵀ[e, k] = factor · (G_adjoint(k) · G_drive(k)) / 4A, row k's adjoint = unit current in at
  // its positive electrode and out at its negative one.
  const size_t n_rows = rows.size();
  jt.resize(n_e, static_cast<Eigen::Index>(n_rows));
  // Columns [k0, k1) of Jᵀ; independent per range (each range finds its own drive field).
  auto columns = [&](size_t k0, size_t k1) {
    Array fx(n_e), fy(n_e);
    int source = -1, sink = -1;
    double factor = 0;
    for (size_t k = k0; k < k1; ++k) {
      const JacobianRow& r = rows[k];
      if (r.source != source || r.sink != sink || r.factor != factor) {
        source = r.source, sink = r.sink, factor = r.factor;
        fx = (gx.col(source) - gx.col(sink)).array() * inv4a * Scalar(factor);
        fy = (gy.col(source) - gy.col(sink)).array() * inv4a * Scalar(factor);
      }
      jt.col(static_cast<Eigen::Index>(k)) =
          (gx.col(r.positive) - gx.col(r.negative)).array() * fx +
          (gy.col(r.positive) - gy.col(r.negative)).array() * fy;
    }
  };
  const int team = static_cast<double>(n_e) * static_cast<double>(n_rows) < kMinParallelWork
                       ? 1
                       : detail::resolve_threads(threads);
  std::vector<std::thread> pool;
  for (int t = 1; t < team; ++t)
    pool.emplace_back(columns, n_rows * static_cast<size_t>(t) / static_cast<size_t>(team),
                      n_rows * static_cast<size_t>(t + 1) / static_cast<size_t>(team));
  columns(0, n_rows / static_cast<size_t>(team));
  for (std::thread& th : pool) th.join();
}

template class GnForwardT<double>;
template class GnForwardT<std::complex<double>>;

}  // namespace eit::recon::detail
