#pragma once
// Internal: the Gauss–Newton step on the distinct rows of J only.
//
// Row k of J (measurement k: drive s→t, voltage p−n) is (∇u_p − ∇u_n)·(∇u_s − ∇u_t) per element,
// u_i the field of a unit current into electrode i (gn_forward.hpp). It is the same row, up to
// sign, for the reciprocal measurement (drive p→n, voltage s−t): in a full adjacent protocol every
// row appears twice (16 electrodes: 208 rows, 104 distinct; 64: 3,904 rows, 1,952 distinct). So
//
//   JᵀJ = Σ_q c_q j_q j_qᵀ = J_uᵀ J_u,   Jᵀ r = Σ_q j_q Σ_{k∈q} s_k r_k = J_uᵀ r_u,
//   J_u row q = √c_q · j_q,   r_u[q] = Σ_{k∈q} s_k r_k / √c_q
//
// (c_q rows in group q, s_k = ±1 the sign of row k against the group's canonical row j_q), and the
// step (JᵀJ + λR)⁻¹ Jᵀ r is unchanged when J, r are replaced by J_u, r_u — exactly, not as an
// approximation — while every product on J costs half. diag(JᵀJ), the kotre prior's input, is
// diag(J_uᵀJ_u) too. A protocol without reciprocal pairs has c_q = 1 throughout and nothing
// changes.
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "eit/recon/protocol.hpp"

namespace eit::recon::detail {

// One row of the (reduced) Jacobian: factor · (∇u_positive − ∇u_negative)·(∇u_source − ∇u_sink).
struct JacobianRow {
  int source, sink, positive, negative;
  double factor;
};

struct ReciprocalRows {
  std::vector<JacobianRow> rows;  // one per group, in order of each group's first measurement
  std::vector<int> group;         // per measurement: its group
  std::vector<int8_t> sign;       // per measurement: s_k
  std::vector<double> inv_scale;  // per group: 1/√c_q
};

// Groups the protocol's measurements by their row of J (see above).
ReciprocalRows group_reciprocal_rows(const Protocol& protocol);

// Every measurement as its own row, factor 1 (J itself).
std::vector<JacobianRow> all_rows(const Protocol& protocol);

// r_u from r (n_meas → number of groups); real or complex.
template <class Vector>
void reduce_residual(const ReciprocalRows& g, const Vector& r, Vector& out) {
  out.setZero(static_cast<Eigen::Index>(g.rows.size()));
  for (size_t k = 0; k < g.group.size(); ++k)
    out(g.group[k]) += static_cast<double>(g.sign[k]) * r(static_cast<Eigen::Index>(k));
  for (size_t q = 0; q < g.rows.size(); ++q) out(static_cast<Eigen::Index>(q)) *= g.inv_scale[q];
}

}  // namespace eit::recon::detail
