#pragma once
// Internal: one sparse factorisation of a symmetric positive definite system (the grounded FEM
// matrix) reused for many right-hand sides (all electrodes at once). Two backends:
//   kEigen    Eigen's SimplicialLDLT (AMD ordering) with the row-major multi-RHS sweep of
//             sparse_ldlt_solve.hpp — fastest for small 2-D meshes, always available;
//   kCholmod  SuiteSparse CHOLMOD's supernodal Cholesky (BLAS-3 on dense supernodes) — far faster
//             on 3-D meshes, whose factors have large dense blocks. Only when built with CHOLMOD
//             (EIT_HAVE_CHOLMOD; CMake option EIT_WITH_CHOLMOD).
// kAuto picks CHOLMOD for tetrahedral meshes when built in, Eigen otherwise (2-D results stay
// bit-for-bit those of the Eigen path). Allocates; not thread-safe (CHOLMOD keeps a workspace).
#include <memory>
#include <string_view>

#include <Eigen/Core>
#include <Eigen/SparseCore>

namespace eit::recon::detail {

enum class SparseBackend { kAuto, kEigen, kCholmod };

// cholmod_available() is public: forward_model.hpp.

class SparseSpdSolver {
 public:
  // Factorises A (lower triangle used). Throws std::runtime_error when the factorisation fails
  // (not positive definite: an unconnected mesh or a bad ground), std::invalid_argument for
  // kCholmod in a build without it.
  SparseSpdSolver(const Eigen::SparseMatrix<double>& A, SparseBackend backend, int dim);
  ~SparseSpdSolver();
  SparseSpdSolver(SparseSpdSolver&&) noexcept;
  SparseSpdSolver& operator=(SparseSpdSolver&&) noexcept;

  Eigen::MatrixXd solve(const Eigen::MatrixXd& b) const;
  std::string_view backend_name() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eit::recon::detail
