#pragma once
// Internal: the forward model as Gauss–Newton needs it, re-assembled cheaply at every iterate.
//
// Same physics and sign as ForwardModel (P1 triangles, point electrodes or CEM, grounded at
// mesh.ref_node, J = −∂v/∂σ; tests check the two agree), but:
//  * the sparsity pattern, the AMD ordering and the symbolic factorisation are computed once; an
//    iterate only rewrites the matrix values through a scatter map (A = A_boundary + Σ σ_e K_e)
//    and refactorises numerically;
//  * any finite σ is accepted, including σ ≤ 0: pyEIT's JAC.gn walks through negative
//    conductivities on its own static example and the compat mode has to follow it (the LDLᵀ
//    factorisation is then of an indefinite matrix; a zero pivot is reported as a failure);
//  * v and Jᵀ are written into caller-owned buffers.
// Not thread-safe; refactorising allocates inside Eigen's sparse LDLᵀ.
#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "eit/recon/forward_model.hpp"
#include "sparse_ldlt_solve.hpp"

namespace eit::recon::detail {

class GnForward {
 public:
  GnForward(const Mesh& mesh, const Protocol& protocol, const ForwardOptions& options);

  // Assembles and factorises at sigma (n_elems, finite); false when the factorisation fails.
  bool set_conductivity(const Eigen::VectorXd& sigma);
  // After set_conductivity: measurements (n_meas) and Jᵀ (n_elems × n_meas), pyEIT's sign.
  void measurements(Eigen::VectorXd& v) const;
  // Measurements are split over `threads` std::threads (≤ 0: every core) when Jᵀ is large.
  void jacobian_transposed(Eigen::MatrixXd& jt, int threads = 1) const;

  const Mesh& mesh() const noexcept { return mesh_; }
  const Protocol& protocol() const noexcept { return protocol_; }
  int n_meas() const noexcept { return static_cast<int>(protocol_.n_meas()); }

 private:
  Mesh mesh_;
  Protocol protocol_;
  std::vector<int> electrode_row_;
  Eigen::SparseMatrix<double> base_;    // boundary terms + ground diagonal, full pattern
  Eigen::SparseMatrix<double> matrix_;  // current A(σ)
  Eigen::Matrix<int, Eigen::Dynamic, 9, Eigen::RowMajor> scatter_;   // value index or −1
  Eigen::Matrix<double, Eigen::Dynamic, 9, Eigen::RowMajor> local_;  // unit-σ K_e entries
  Eigen::MatrixXd sx_, sy_;  // n_elems × 3 edge vectors (as ElementGeometry)
  Eigen::ArrayXd inv4a_;
  SparseLdlt ldlt_;
  Eigen::MatrixXd rhs_, fields_;  // unit injection per electrode, and its solution
};

}  // namespace eit::recon::detail
