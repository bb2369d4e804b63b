#include "eit/recon/forward_model.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <Eigen/SparseCholesky>

#include "eit/recon/mesh_check.hpp"
#include "fem_assembly.hpp"
#include "sparse_spd_solver.hpp"

namespace eit::recon {


struct ForwardModel::Impl {
  Mesh mesh;
  Protocol protocol;
  ForwardOptions options;
  detail::ElementGeometry geometry;
  detail::ElectrodeContacts contacts;  // CEM only
  std::vector<int> electrode_row;  // unknown carrying electrode l's voltage / injection

  bool cached = false;
  Eigen::VectorXd cached_perm;
  Eigen::MatrixXd fields;  // n_unknowns × n_el: response to unit current into electrode l

  detail::SparseBackend backend() const {
    switch (options.solver) {
      case ForwardOptions::Solver::kEigen:
        return detail::SparseBackend::kEigen;
      case ForwardOptions::Solver::kCholmod:
        return detail::SparseBackend::kCholmod;
      case ForwardOptions::Solver::kAuto:
        break;
    }
    return detail::SparseBackend::kAuto;
  }
  bool cem() const { return options.electrodes == ForwardOptions::Electrodes::kComplete; }
  int n_el() const { return mesh.n_electrodes(); }

  Eigen::VectorXd effective_perm(const Eigen::VectorXd& perm) const {
    if (perm.size() == 0) return Eigen::VectorXd::Ones(mesh.n_elems());
    if (perm.size() != mesh.n_elems())
      throw std::invalid_argument(
          fmt::format("perm has {} values, the mesh has {} elements", perm.size(), mesh.n_elems()));
    for (Eigen::Index e = 0; e < perm.size(); ++e)
      if (!(perm(e) > 0) || !std::isfinite(perm(e)))
        throw std::invalid_argument(
            fmt::format("perm[{}] = {}, expected a finite conductivity > 0", e, perm(e)));
    return perm;
  }

  // Factorises the system at perm (unless cached) and solves for the electrode unit fields.
  const Eigen::MatrixXd& prepare(const Eigen::VectorXd& perm_in) {
    Eigen::VectorXd perm = effective_perm(perm_in);
    if (cached && perm.size() == cached_perm.size() && perm == cached_perm) return fields;
    const Eigen::SparseMatrix<double> A = detail::assemble_system(
        mesh, geometry, perm, contacts, options.contact_impedance, /*grounded=*/true);
    const detail::SparseSpdSolver solver(A, backend(), mesh.dim());
    Eigen::MatrixXd rhs = Eigen::MatrixXd::Zero(A.rows(), n_el());
    for (int l = 0; l < n_el(); ++l) rhs(electrode_row[static_cast<size_t>(l)], l) = 1.0;
    fields = solver.solve(rhs);
    cached_perm = std::move(perm);
    cached = true;
    return fields;
  }

  Eigen::MatrixXd transfer(const Eigen::VectorXd& perm) {
    const Eigen::MatrixXd& x = prepare(perm);
    Eigen::MatrixXd z(n_el(), n_el());
    for (int i = 0; i < n_el(); ++i) z.row(i) = x.row(electrode_row[static_cast<size_t>(i)]);
    return z;
  }
};

ForwardModel::ForwardModel(const Mesh& mesh, const Protocol& protocol, ForwardOptions options)
    : impl_(std::make_unique<Impl>()) {
  check_mesh(mesh, "forward model mesh");
  if (protocol.n_electrodes != mesh.n_electrodes())
    throw std::invalid_argument(
        fmt::format("forward model: protocol has {} electrodes, mesh has {}", protocol.n_electrodes,
                    mesh.n_electrodes()));
  for (int node : mesh.electrode_nodes)
    if (node == mesh.ref_node)
      throw std::invalid_argument(fmt::format(
          "forward model: ref_node {} is an electrode node; ground a node without an electrode",
          node));
  Impl& m = *impl_;
  m.mesh = mesh;
  m.protocol = protocol;
  m.options = options;
  m.geometry = detail::element_geometry(mesh);
  if (m.cem()) {
    if (!(options.contact_impedance > 0) || !std::isfinite(options.contact_impedance))
      throw std::invalid_argument(fmt::format("forward model: contact impedance {} must be > 0",
                                              options.contact_impedance));
    m.contacts = detail::electrode_contacts(mesh, options.electrode_width);
    for (int l = 0; l < mesh.n_electrodes(); ++l) m.electrode_row.push_back(mesh.n_nodes() + l);
  } else {
    m.electrode_row = mesh.electrode_nodes;
  }
}

ForwardModel::~ForwardModel() = default;
ForwardModel::ForwardModel(ForwardModel&&) noexcept = default;
ForwardModel& ForwardModel::operator=(ForwardModel&&) noexcept = default;

Eigen::MatrixXd ForwardModel::transfer_impedance(const Eigen::VectorXd& perm) {
  return impl_->transfer(perm);
}

Eigen::VectorXd ForwardModel::solve(const Eigen::VectorXd& perm) {
  const Eigen::MatrixXd z = impl_->transfer(perm);
  const Protocol& p = impl_->protocol;
  Eigen::VectorXd v(static_cast<Eigen::Index>(p.n_meas()));
  for (size_t k = 0; k < p.n_meas(); ++k) {
    const Measurement& m = p.measurements[k];
    const Drive& d = p.drives[static_cast<size_t>(m.drive)];
    v(static_cast<Eigen::Index>(k)) = (z(m.positive, d.source) - z(m.positive, d.sink)) -
                                      (z(m.negative, d.source) - z(m.negative, d.sink));
  }
  return v;
}

Eigen::MatrixXd ForwardModel::electrode_voltages(const Eigen::VectorXd& perm) {
  const Eigen::MatrixXd z = impl_->transfer(perm);
  const Protocol& p = impl_->protocol;
  Eigen::MatrixXd u(z.rows(), static_cast<Eigen::Index>(p.drives.size()));
  for (size_t d = 0; d < p.drives.size(); ++d)
    u.col(static_cast<Eigen::Index>(d)) = z.col(p.drives[d].source) - z.col(p.drives[d].sink);
  return u;
}

Eigen::MatrixXd ForwardModel::drive_potentials(const Eigen::VectorXd& perm) {
  const Eigen::MatrixXd& x = impl_->prepare(perm);
  const Protocol& p = impl_->protocol;
  const int n_nodes = impl_->mesh.n_nodes();
  Eigen::MatrixXd f(n_nodes, static_cast<Eigen::Index>(p.drives.size()));
  for (size_t d = 0; d < p.drives.size(); ++d)
    f.col(static_cast<Eigen::Index>(d)) =
        x.col(p.drives[d].source).head(n_nodes) - x.col(p.drives[d].sink).head(n_nodes);
  return f;
}

Eigen::MatrixXd ForwardModel::electrode_currents(const Eigen::VectorXd& perm) {
  Impl& m = *impl_;
  if (!m.cem())
    throw std::invalid_argument(
        "electrode_currents: only defined for the complete electrode model");
  const Eigen::MatrixXd f = drive_potentials(perm);
  const Eigen::MatrixXd u = electrode_voltages(perm);
  const double z = m.options.contact_impedance;
  Eigen::MatrixXd current = Eigen::MatrixXd::Zero(m.n_el(), f.cols());
  for (int l = 0; l < m.n_el(); ++l)
    for (const detail::ContactFacet& c : m.contacts[static_cast<size_t>(l)]) {
      Eigen::RowVectorXd sum = c.measure * u.row(l);
      for (int i = 0; i < c.count; ++i)
        sum -= c.load[static_cast<size_t>(i)] * f.row(c.node[static_cast<size_t>(i)]);
      current.row(l) += sum / z;
    }
  return current;
}

Eigen::MatrixXd ForwardModel::jacobian(const Eigen::VectorXd& perm, bool normalize) {
  return jacobian_transposed(perm, normalize).transpose();
}

Eigen::MatrixXd ForwardModel::jacobian_transposed(const Eigen::VectorXd& perm, bool normalize) {
  Impl& m = *impl_;
  const Eigen::MatrixXd& x = m.prepare(perm);
  const Mesh& mesh = m.mesh;
  const Protocol& p = m.protocol;
  const int n_e = mesh.n_elems();
  const int n_el = m.n_el();
  const auto& g = m.geometry;

  // Scaled gradient g = Σ_i x(n_i) g_i (see ElementGeometry) of every electrode field on every
  // element, per spatial component: one column per electrode, contiguous over elements. Node rows
  // are gathered from a row-major copy so each element reads d + 1 contiguous rows.
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const RowMajor xr = x.topRows(mesh.n_nodes());
  const int dim = g.dim, nv = dim + 1;
  std::vector<Eigen::MatrixXd> grad(static_cast<size_t>(dim));
  {
    RowMajor gr(n_e, n_el);
    for (int c = 0; c < dim; ++c) {
      const Eigen::MatrixXd& gc = g.grad[static_cast<size_t>(c)];
      for (int e = 0; e < n_e; ++e) {
        auto row = gr.row(e);
        row = gc(e, 0) * xr.row(mesh.elements(e, 0));
        for (int i = 1; i < nv; ++i) row += gc(e, i) * xr.row(mesh.elements(e, i));
      }
      grad[static_cast<size_t>(c)] = gr;
    }
  }
  const Eigen::ArrayXd& weight = g.weight.array();

  // Jᵀ[e, k] = r_kᵀ K_e f_d = w_e (g_r · g_f), with f the drive field and r the adjoint field of
  // measurement k (unit current into its positive electrode, out of its negative one).
  // Tiled over elements so the tile's gradient columns stay in cache across all measurements.
  Eigen::MatrixXd jt(n_e, static_cast<Eigen::Index>(p.n_meas()));
  constexpr Eigen::Index kTile = 2048;
  std::vector<Eigen::ArrayXd> f(static_cast<size_t>(dim),
                                Eigen::ArrayXd(std::min<Eigen::Index>(kTile, n_e)));
  for (Eigen::Index e0 = 0; e0 < n_e; e0 += kTile) {
    const Eigen::Index count = std::min<Eigen::Index>(kTile, n_e - e0);
    const auto w = weight.segment(e0, count);
    int current_drive = -1;
    for (size_t k = 0; k < p.n_meas(); ++k) {
      const Measurement& meas = p.measurements[k];
      if (meas.drive != current_drive) {
        const Drive& d = p.drives[static_cast<size_t>(meas.drive)];
        for (int c = 0; c < dim; ++c) {
          const auto gt = grad[static_cast<size_t>(c)].middleRows(e0, count);
          f[static_cast<size_t>(c)].head(count) =
              (gt.col(d.source) - gt.col(d.sink)).array() * w;
        }
        current_drive = meas.drive;
      }
      auto out = jt.col(static_cast<Eigen::Index>(k)).segment(e0, count);
      for (int c = 0; c < dim; ++c) {
        const auto gt = grad[static_cast<size_t>(c)].middleRows(e0, count);
        const auto term =
            (gt.col(meas.positive) - gt.col(meas.negative)).array() * f[static_cast<size_t>(c)].head(count);
        if (c == 0)
          out = term.matrix();
        else
          out += term.matrix();
      }
    }
  }
  if (normalize) {
    const Eigen::VectorXd v = solve(perm);
    for (Eigen::Index k = 0; k < jt.cols(); ++k) jt.col(k) /= std::abs(v(k));
  }
  return jt;
}

const Mesh& ForwardModel::mesh() const noexcept { return impl_->mesh; }
const Protocol& ForwardModel::protocol() const noexcept { return impl_->protocol; }
const ForwardOptions& ForwardModel::options() const noexcept { return impl_->options; }
const Eigen::VectorXd& ForwardModel::element_areas() const noexcept { return impl_->geometry.measure; }

}  // namespace eit::recon
