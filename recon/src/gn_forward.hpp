#pragma once
// Internal: the forward model as Gauss–Newton needs it, re-assembled cheaply at every iterate.
//
// Same physics and sign as ForwardModel (P1 triangles, point electrodes or CEM, grounded at
// mesh.ref_node, J = −∂v/∂σ; tests check the two agree), but:
//  * the sparsity pattern, the ordering and the symbolic factorisation are computed once; an
//    iterate only rewrites the matrix values through a scatter map (A = A_boundary + Σ σ_e K_e)
//    and refactorises numerically;
//  * any finite σ is accepted, including σ ≤ 0: pyEIT's JAC.gn walks through negative
//    conductivities on its own static example and the compat mode has to follow it (the LDLᵀ
//    factorisation is then of an indefinite matrix; a zero pivot is reported as a failure);
//  * v and Jᵀ are written into caller-owned buffers, Jᵀ for any list of rows (gn_reciprocity.hpp).
// Scalar double, or std::complex<double> for complex conductivity (admittivity σ + iωε): A(σ) is
// then complex symmetric (not Hermitian), factorised by sparse LU; v and J = −∂v/∂σ are the
// holomorphic ones (no conjugation anywhere: reciprocity holds as in the real case).
// Not thread-safe; refactorising allocates inside Eigen's sparse factorisations.
#include <complex>
#include <span>

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <Eigen/SparseLU>

#include "eit/recon/forward_model.hpp"
#include "gn_reciprocity.hpp"
#include "sparse_ldlt_solve.hpp"

namespace eit::recon::detail {

template <class Scalar>
struct GnFactorisation {
  using type = SparseLdlt;
};
template <>
struct GnFactorisation<std::complex<double>> {
  using type =
      Eigen::SparseLU<Eigen::SparseMatrix<std::complex<double>>, Eigen::COLAMDOrdering<int>>;
};

template <class Scalar>
class GnForwardT {
 public:
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;

  GnForwardT(const Mesh& mesh, const Protocol& protocol, const ForwardOptions& options);

  // Assembles and factorises at sigma (n_elems, finite); false when the factorisation fails.
  bool set_conductivity(const Vector& sigma);
  // After set_conductivity: measurements (n_meas).
  void measurements(Vector& v) const;
  // Jᵀ restricted to `rows` (n_elems × rows.size()), pyEIT's sign. Columns are split over
  // `threads` std::threads (≤ 0: every core) when Jᵀ is large.
  void jacobian_transposed(Matrix& jt, std::span<const JacobianRow> rows, int threads = 1) const;

  const Mesh& mesh() const noexcept { return mesh_; }
  const Protocol& protocol() const noexcept { return protocol_; }
  int n_meas() const noexcept { return static_cast<int>(protocol_.n_meas()); }

 private:
  Mesh mesh_;
  Protocol protocol_;
  std::vector<int> electrode_row_;
  Eigen::SparseMatrix<Scalar> base_;    // boundary terms + ground diagonal, full pattern
  Eigen::SparseMatrix<Scalar> matrix_;  // current A(σ)
  Eigen::Matrix<int, Eigen::Dynamic, 9, Eigen::RowMajor> scatter_;   // value index or −1
  Eigen::Matrix<double, Eigen::Dynamic, 9, Eigen::RowMajor> local_;  // unit-σ K_e entries
  Eigen::MatrixXd sx_, sy_;  // n_elems × 3 edge vectors (as ElementGeometry)
  Eigen::ArrayXd inv4a_;
  typename GnFactorisation<Scalar>::type factor_;
  Matrix rhs_, fields_;  // unit injection per electrode, and its solution
};

using GnForward = GnForwardT<double>;
using GnForwardComplex = GnForwardT<std::complex<double>>;

extern template class GnForwardT<double>;
extern template class GnForwardT<std::complex<double>>;

}  // namespace eit::recon::detail
