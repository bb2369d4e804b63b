#include "eit/recon/forward_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <Eigen/SparseCholesky>

#include "eit/recon/mesh_check.hpp"
#include "fem_assembly.hpp"
#include "gn_dense.hpp"
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
  Eigen::VectorXd v_abs;  // |v0| per measurement, divided out per tile (normalize)
  if (normalize) v_abs = solve(perm).cwiseAbs();  // cached fields: no second factorisation
  const Mesh& mesh = m.mesh;
  const Protocol& p = m.protocol;
  const int n_e = mesh.n_elems();
  const int n_el = m.n_el();
  const auto& g = m.geometry;
  const int dim = g.dim, nv = dim + 1;
  const auto n_meas = static_cast<Eigen::Index>(p.n_meas());

  // Scaled gradient g = Σ_i x(n_i) g_i (see ElementGeometry) of every electrode field on every
  // element, per spatial component: one column per electrode, contiguous over elements. Node rows
  // are gathered from a row-major copy so each element reads d + 1 contiguous rows.
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const RowMajor xr = x.topRows(mesh.n_nodes());
  std::vector<Eigen::MatrixXd> grad(static_cast<size_t>(dim), Eigen::MatrixXd(n_e, n_el));
  const Eigen::ArrayXd& weight = g.weight.array();
  Eigen::MatrixXd jt(n_e, n_meas);

  // Jᵀ[e, k] = r_kᵀ K_e f_d = w_e (g_r · g_f), with f the drive field and r the adjoint field of
  // measurement k (unit current into its positive electrode, out of its negative one).
  // Tiled over elements so the tile's gradient columns stay in cache across all measurements.
  // Each tile reads only its own elements and writes only its own rows of grad and Jᵀ, so tiles
  // run on any thread in any order and the result is bit-identical for every thread count.
  constexpr Eigen::Index kTile = 2048;
  const auto tile = [&](Eigen::Index e0, std::vector<Eigen::ArrayXd>& f, RowMajor& gr) {
    const Eigen::Index count = std::min<Eigen::Index>(kTile, n_e - e0);
    for (int c = 0; c < dim; ++c) {
      const Eigen::MatrixXd& gc = g.grad[static_cast<size_t>(c)];
      for (Eigen::Index i = 0; i < count; ++i) {
        const Eigen::Index e = e0 + i;
        auto row = gr.row(i);
        row = gc(e, 0) * xr.row(mesh.elements(e, 0));
        for (int j = 1; j < nv; ++j) row += gc(e, j) * xr.row(mesh.elements(e, j));
      }
      grad[static_cast<size_t>(c)].middleRows(e0, count) = gr.topRows(count);
    }
    const auto w = weight.segment(e0, count);
    int current_drive = -1;
    for (Eigen::Index k = 0; k < n_meas; ++k) {
      const Measurement& meas = p.measurements[static_cast<size_t>(k)];
      if (meas.drive != current_drive) {
        const Drive& d = p.drives[static_cast<size_t>(meas.drive)];
        for (int c = 0; c < dim; ++c) {
          const auto gt = grad[static_cast<size_t>(c)].middleRows(e0, count);
          f[static_cast<size_t>(c)].head(count) =
              (gt.col(d.source) - gt.col(d.sink)).array() * w;
        }
        current_drive = meas.drive;
      }
      auto out = jt.col(k).segment(e0, count);
      for (int c = 0; c < dim; ++c) {
        const auto gt = grad[static_cast<size_t>(c)].middleRows(e0, count);
        const auto term = (gt.col(meas.positive) - gt.col(meas.negative)).array() *
                          f[static_cast<size_t>(c)].head(count);
        if (c == 0)
          out = term.matrix();
        else
          out += term.matrix();
      }
      if (normalize) out /= v_abs(k);
    }
  };
  const Eigen::Index n_tiles = (n_e + kTile - 1) / kTile;
  // A tile is ≥ 2048 · n_meas · 2d multiply-adds (~1 ms), far above a thread's start (~50 µs).
  const int team = static_cast<int>(
      std::min<Eigen::Index>(n_tiles, detail::resolve_threads(m.options.threads)));
  // Scratch per thread, allocated here so that no worker thread can throw.
  const Eigen::Index rows = std::min<Eigen::Index>(kTile, n_e);
  std::vector<std::vector<Eigen::ArrayXd>> f(
      static_cast<size_t>(team),
      std::vector<Eigen::ArrayXd>(static_cast<size_t>(dim), Eigen::ArrayXd(rows)));
  std::vector<RowMajor> gr(static_cast<size_t>(team), RowMajor(rows, n_el));
  // Thread t takes tiles t, t + team, t + 2·team, …: interleaved, so a slow core delays by one tile.
  const auto worker = [&](int t) {
    for (Eigen::Index i = t; i < n_tiles; i += team)
      tile(i * kTile, f[static_cast<size_t>(t)], gr[static_cast<size_t>(t)]);
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(team) - 1);
  for (int t = 1; t < team; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (std::thread& th : pool) th.join();
  return jt;
}

const Mesh& ForwardModel::mesh() const noexcept { return impl_->mesh; }
const Protocol& ForwardModel::protocol() const noexcept { return impl_->protocol; }
const ForwardOptions& ForwardModel::options() const noexcept { return impl_->options; }
const Eigen::VectorXd& ForwardModel::element_areas() const noexcept { return impl_->geometry.measure; }

}  // namespace eit::recon
