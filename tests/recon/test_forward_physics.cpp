// Physics of the forward model, checked independently of pyEIT: reciprocity, current conservation,
// the Jacobian against finite differences, and the complete electrode model against its own
// energy identity, contact currents, mesh refinement and the point-electrode limit.
#include <doctest/doctest.h>

#include <cmath>

#include <Eigen/LU>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/mesh_boundary.hpp"
#include "recon_fixtures.hpp"

using namespace eit::recon;

namespace {

ForwardOptions cem(double z, double width) {
  ForwardOptions o;
  o.electrodes = ForwardOptions::Electrodes::kComplete;
  o.contact_impedance = z;
  o.electrode_width = width;
  return o;
}

Eigen::VectorXd anomaly_perm(const Mesh& mesh) {
  Eigen::VectorXd perm = Eigen::VectorXd::Ones(mesh.n_elems());
  for (int e = 0; e < mesh.n_elems(); ++e) {
    Eigen::RowVector2d c = Eigen::RowVector2d::Zero();
    for (int k = 0; k < 3; ++k) c += mesh.nodes.row(mesh.elements(e, k)) / 3.0;
    if ((c - Eigen::RowVector2d(0.3, -0.2)).norm() < 0.3) perm(e) = 3.0;
  }
  return perm;
}

// Ungrounded stiffness K·u for one node potential vector, assembled here from first principles
// (∫σ∇φ_i·∇φ_j on each triangle), independent of the library's assembly.
Eigen::VectorXd apply_stiffness(const Mesh& mesh, const Eigen::VectorXd& perm,
                                const Eigen::VectorXd& u) {
  Eigen::VectorXd out = Eigen::VectorXd::Zero(mesh.n_nodes());
  for (int e = 0; e < mesh.n_elems(); ++e) {
    Eigen::Matrix<double, 3, 3> m;
    for (int k = 0; k < 3; ++k)
      m.row(k) << 1.0, mesh.nodes(mesh.elements(e, k), 0), mesh.nodes(mesh.elements(e, k), 1);
    const double area = 0.5 * m.determinant();
    const Eigen::Matrix<double, 3, 3> coef = m.inverse();  // column k: φ_k = c0 + c1 x + c2 y
    Eigen::Vector2d grad = Eigen::Vector2d::Zero();
    for (int k = 0; k < 3; ++k) grad += u(mesh.elements(e, k)) * coef.col(k).tail<2>();
    for (int k = 0; k < 3; ++k)
      out(mesh.elements(e, k)) += perm(e) * area * grad.dot(coef.col(k).tail<2>());
  }
  return out;
}

// Central finite difference of −v with respect to σ_e, relative step h.
Eigen::VectorXd fd_column(ForwardModel& fwd, const Eigen::VectorXd& perm, int e) {
  const double h = 1e-5 * perm(e);
  Eigen::VectorXd up = perm, down = perm;
  up(e) += h;
  down(e) -= h;
  return -(fwd.solve(up) - fwd.solve(down)) / (2 * h);
}

}  // namespace

TEST_CASE("transfer impedances are reciprocal (symmetric) for point and complete electrodes") {
  const auto mesh = eit::test::pyeit_mesh_h01();
  if (!mesh) return;
  const Eigen::VectorXd perm = anomaly_perm(*mesh);
  for (const ForwardOptions& o : {ForwardOptions{}, cem(0.05, 0.15)}) {
    ForwardModel fwd(*mesh, make_protocol({}), o);
    const Eigen::MatrixXd z = fwd.transfer_impedance(perm);
    const double asym = (z - z.transpose()).norm() / z.norm();
    MESSAGE("relative asymmetry " << asym);
    CHECK(asym < 1e-12);
  }
}

TEST_CASE("drive fields conserve current: K·f equals +1/−1 at the drive nodes, 0 elsewhere") {
  const auto mesh = eit::test::pyeit_mesh_h01();
  if (!mesh) return;
  const Protocol protocol = make_protocol({});
  ForwardModel fwd(*mesh, protocol);
  const Eigen::VectorXd perm = anomaly_perm(*mesh);
  const Eigen::MatrixXd f = fwd.drive_potentials(perm);
  double worst = 0;
  for (size_t d = 0; d < protocol.drives.size(); ++d) {
    Eigen::VectorXd b = Eigen::VectorXd::Zero(mesh->n_nodes());
    b(mesh->electrode_nodes[protocol.drives[d].source]) = 1.0;
    b(mesh->electrode_nodes[protocol.drives[d].sink]) = -1.0;
    const Eigen::VectorXd r = apply_stiffness(*mesh, perm, f.col(static_cast<Eigen::Index>(d)));
    CHECK(std::abs(r.sum()) < 1e-12);
    worst = std::max(worst, (r - b).cwiseAbs().maxCoeff());
  }
  MESSAGE("largest nodal current error " << worst << " (ground node included)");
  CHECK(worst < 1e-10);
}

TEST_CASE("Jacobian equals −∂v/∂σ by central finite differences (point and complete electrodes)") {
  const auto mesh = eit::test::pyeit_mesh_h01();
  if (!mesh) return;
  const Eigen::VectorXd perm = anomaly_perm(*mesh);
  for (const ForwardOptions& o : {ForwardOptions{}, cem(0.02, 0.12)}) {
    ForwardModel fwd(*mesh, make_protocol({}), o);
    const Eigen::MatrixXd J = fwd.jacobian(perm);
    for (int e : {3, 100, 349, 516, 685}) {
      const Eigen::VectorXd fd = fd_column(fwd, perm, e);
      const double err = (J.col(e) - fd).norm() / fd.norm();
      MESSAGE("element " << e << ": rel err " << err);
      CHECK(err < 1e-6);
    }
  }
}

TEST_CASE("CEM contact currents carry exactly the drive pattern and sum to zero") {
  const auto mesh = eit::test::pyeit_mesh_h01();
  if (!mesh) return;
  const Protocol protocol = make_protocol({});
  ForwardModel fwd(*mesh, protocol, cem(0.01, 0.1));
  const Eigen::MatrixXd current = fwd.electrode_currents(anomaly_perm(*mesh));
  Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(16, 16);
  for (int d = 0; d < 16; ++d) {
    expected(protocol.drives[d].source, d) = 1.0;
    expected(protocol.drives[d].sink, d) = -1.0;
  }
  CHECK((current - expected).cwiseAbs().maxCoeff() < 1e-9);
  CHECK(current.colwise().sum().cwiseAbs().maxCoeff() < 1e-9);
}

TEST_CASE("CEM energy identity: IᵀU = ∫σ|∇u|² + Σ 1/z ∫(U − u)² on explicit electrode patches") {
  auto mesh = eit::test::pyeit_mesh_h01();
  if (!mesh) return;
  // Each electrode covers the two boundary edges around its node.
  const std::vector<int> next = boundary_successors(*mesh);
  std::vector<int> prev(next.size(), -1);
  for (size_t i = 0; i < next.size(); ++i)
    if (next[i] >= 0) prev[next[i]] = static_cast<int>(i);
  for (int node : mesh->electrode_nodes)
    mesh->electrode_patches.push_back({prev[node], node, next[node]});
  const double z = 0.03;
  const Protocol protocol = make_protocol({});
  ForwardModel fwd(*mesh, protocol, cem(z, 1.0 /* unused: patches given */));
  const Eigen::VectorXd perm = anomaly_perm(*mesh);
  const Eigen::MatrixXd f = fwd.drive_potentials(perm);
  const Eigen::MatrixXd u = fwd.electrode_voltages(perm);
  for (int d : {0, 5, 11}) {
    const Eigen::VectorXd fd = f.col(d);
    const double bulk = fd.dot(apply_stiffness(*mesh, perm, fd));
    double contact = 0;
    for (int l = 0; l < 16; ++l) {
      const auto& patch = mesh->electrode_patches[l];
      for (size_t i = 0; i + 1 < patch.size(); ++i) {
        const double len = (mesh->nodes.row(patch[i]) - mesh->nodes.row(patch[i + 1])).norm();
        const double ga = u(l, d) - fd(patch[i]), gb = u(l, d) - fd(patch[i + 1]);
        const double gm = 0.5 * (ga + gb);  // Simpson's rule, exact for the quadratic (U − u)²
        contact += len / 6.0 * (ga * ga + 4 * gm * gm + gb * gb) / z;
      }
    }
    const double power = u(protocol.drives[d].source, d) - u(protocol.drives[d].sink, d);
    MESSAGE("drive " << d << ": IᵀU " << power << ", bulk + contact " << bulk + contact);
    CHECK(std::abs(power - (bulk + contact)) < 1e-10 * power);
  }
}

TEST_CASE("CEM converges under uniform mesh refinement") {
  const auto coarse = eit::test::pyeit_mesh_h01();
  if (!coarse) return;
  const Mesh m1 = eit::test::refine_uniform(*coarse);
  const Mesh m2 = eit::test::refine_uniform(m1);
  const Protocol protocol = make_protocol({});
  const auto solve = [&](const Mesh& m) {
    ForwardModel fwd(m, protocol, cem(0.02, 0.15));
    return fwd.solve();
  };
  const Eigen::VectorXd v0 = solve(*coarse), v1 = solve(m1), v2 = solve(m2);
  const double d01 = (v1 - v0).norm() / v2.norm(), d12 = (v2 - v1).norm() / v2.norm();
  MESSAGE("successive relative changes " << d01 << ", " << d12 << " (ratio " << d01 / d12 << ")");
  CHECK(d12 < d01 / 2.5);
  CHECK(d12 < 2e-3);
}

TEST_CASE("CEM tends to the point-electrode model as width → 0 with z/width → 0") {
  const auto mesh = eit::test::pyeit_mesh_h01();
  if (!mesh) return;
  const Protocol protocol = make_protocol({});
  const Eigen::VectorXd perm = anomaly_perm(*mesh);
  ForwardModel point(*mesh, protocol);
  const Eigen::VectorXd vp = point.solve(perm);
  double previous = 1e300;
  for (double w : {1e-2, 1e-3, 1e-4}) {
    ForwardModel fwd(*mesh, protocol, cem(w * w, w));
    const double diff = (fwd.solve(perm) - vp).norm() / vp.norm();
    MESSAGE("width " << w << ": relative difference to point electrodes " << diff);
    CHECK(diff < previous / 5);
    previous = diff;
  }
  CHECK(previous < 1e-3);
}
