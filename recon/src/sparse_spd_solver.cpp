#include "sparse_spd_solver.hpp"

#include <stdexcept>

#include <fmt/format.h>

#ifdef EIT_HAVE_CHOLMOD
#include <Eigen/CholmodSupport>
#endif

#include "eit/recon/forward_model.hpp"
#include "sparse_ldlt_solve.hpp"

namespace eit::recon {

bool cholmod_available() noexcept {
#ifdef EIT_HAVE_CHOLMOD
  return true;
#else
  return false;
#endif
}

}  // namespace eit::recon

namespace eit::recon::detail {

struct SparseSpdSolver::Impl {
  std::unique_ptr<SparseLdlt> eigen;
#ifdef EIT_HAVE_CHOLMOD
  std::unique_ptr<Eigen::CholmodSupernodalLLT<Eigen::SparseMatrix<double>, Eigen::Lower>> cholmod;
#endif
};

SparseSpdSolver::SparseSpdSolver(const Eigen::SparseMatrix<double>& A, SparseBackend backend,
                                 int dim)
    : impl_(std::make_unique<Impl>()) {
  if (backend == SparseBackend::kAuto)
    backend = dim == 3 && cholmod_available() ? SparseBackend::kCholmod : SparseBackend::kEigen;
  if (backend == SparseBackend::kCholmod) {
#ifdef EIT_HAVE_CHOLMOD
    impl_->cholmod = std::make_unique<
        Eigen::CholmodSupernodalLLT<Eigen::SparseMatrix<double>, Eigen::Lower>>();
    impl_->cholmod->compute(A);
    if (impl_->cholmod->info() != Eigen::Success)
      throw std::runtime_error(
          "forward model: CHOLMOD factorisation of the FEM system failed (is the mesh "
          "connected?)");
    return;
#else
    throw std::invalid_argument(
        "sparse solver: cholmod requested, but this build has no CHOLMOD (libsuitesparse-dev; "
        "CMake option EIT_WITH_CHOLMOD)");
#endif
  }
  impl_->eigen = std::make_unique<SparseLdlt>(A);
  if (impl_->eigen->info() != Eigen::Success)
    throw std::runtime_error(
        "forward model: factorisation of the FEM system failed (is the mesh connected?)");
}

SparseSpdSolver::~SparseSpdSolver() = default;
SparseSpdSolver::SparseSpdSolver(SparseSpdSolver&&) noexcept = default;
SparseSpdSolver& SparseSpdSolver::operator=(SparseSpdSolver&&) noexcept = default;

Eigen::MatrixXd SparseSpdSolver::solve(const Eigen::MatrixXd& b) const {
#ifdef EIT_HAVE_CHOLMOD
  if (impl_->cholmod) return impl_->cholmod->solve(b);
#endif
  return solve_many(*impl_->eigen, b);
}

std::string_view SparseSpdSolver::backend_name() const noexcept {
  return impl_->eigen ? "eigen" : "cholmod";
}

}  // namespace eit::recon::detail
