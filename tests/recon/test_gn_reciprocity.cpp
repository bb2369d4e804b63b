// Gauss–Newton on the distinct rows of J (recon/src/gn_reciprocity.*): the grouping of reciprocal
// measurements, and that the reduced J_u, r_u give the same JᵀJ and Jᵀr as the full J, r — for
// the adjacent protocol (every row twice), an opposite-drive one and a single measurement.
#include <doctest/doctest.h>

#include <Eigen/Dense>

#include "../../recon/src/gn_forward.hpp"
#include "../../recon/src/gn_reciprocity.hpp"
#include "eit/recon/forward_model.hpp"
#include "eit/recon/layered_circle_mesh.hpp"
#include "eit/recon/protocol.hpp"

using namespace eit::recon;

TEST_CASE("gn reciprocity: an adjacent protocol's rows of J come in reciprocal pairs") {
  for (int n_el : {16, 64}) {
    CAPTURE(n_el);
    ProtocolOptions po;
    po.n_electrodes = n_el;
    const Protocol protocol = make_protocol(po);
    const detail::ReciprocalRows g = detail::group_reciprocal_rows(protocol);
    CHECK(protocol.n_meas() == static_cast<size_t>(n_el * (n_el - 3)));
    CHECK(g.rows.size() == static_cast<size_t>(n_el * (n_el - 3) / 2));
    std::vector<int> count(g.rows.size(), 0);
    for (int q : g.group) ++count[static_cast<size_t>(q)];
    for (int c : count) CHECK(c == 2);
  }
}

TEST_CASE("gn reciprocity: J_uᵀJ_u = JᵀJ and J_uᵀr_u = Jᵀr, J matching ForwardModel") {
  const Mesh mesh = layered_circle_mesh(16, 4);
  Eigen::VectorXd sigma(mesh.n_elems());
  for (int e = 0; e < mesh.n_elems(); ++e) sigma(e) = 1.0 + 0.5 * std::sin(0.37 * e);
  ProtocolOptions opposite;
  opposite.drive_distance = 8;
  opposite.measure_on_driven = true;
  for (const ProtocolOptions& po : {ProtocolOptions{}, opposite}) {
    CAPTURE(po.drive_distance);
    const Protocol protocol = make_protocol(po);
    detail::GnForward forward(mesh, protocol, {});
    REQUIRE(forward.set_conductivity(sigma));
    Eigen::MatrixXd jt_full, jt_u;
    forward.jacobian_transposed(jt_full, detail::all_rows(protocol));
    const detail::ReciprocalRows g = detail::group_reciprocal_rows(protocol);
    forward.jacobian_transposed(jt_u, g.rows);
    CHECK(jt_u.cols() < jt_full.cols());

    ForwardModel reference(mesh, protocol);
    const Eigen::MatrixXd want = reference.jacobian_transposed(sigma);
    CHECK((jt_full - want).norm() / want.norm() < 1e-10);

    Eigen::VectorXd r(jt_full.cols()), r_u;
    for (Eigen::Index k = 0; k < r.size(); ++k) r(k) = std::cos(1.3 * static_cast<double>(k));
    detail::reduce_residual(g, r, r_u);
    const Eigen::MatrixXd jtj = jt_full * jt_full.transpose();
    CHECK((jt_u * jt_u.transpose() - jtj).norm() / jtj.norm() < 1e-12);
    const Eigen::VectorXd jtr = jt_full * r;
    CHECK((jt_u * r_u - jtr).norm() / jtr.norm() < 1e-12);
  }
}

TEST_CASE("gn reciprocity: a protocol without reciprocal pairs keeps every row, factor 1") {
  Protocol p = make_protocol({});
  p.measurements.resize(1);
  const detail::ReciprocalRows g = detail::group_reciprocal_rows(p);
  REQUIRE(g.rows.size() == 1);
  CHECK(g.rows[0].factor == 1.0);
  Eigen::VectorXd r(1), r_u;
  r(0) = 2.5;
  detail::reduce_residual(g, r, r_u);
  CHECK(std::abs(std::abs(r_u(0)) - 2.5) < 1e-15);
}
