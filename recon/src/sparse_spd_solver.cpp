#include "sparse_spd_solver.hpp"

#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "eit/recon/forward_model.hpp"
#include "sparse_ldlt_solve.hpp"
#ifdef EIT_HAVE_CHOLMOD
#include "cholmod_loader.hpp"
#endif

#ifndef EIT_HAVE_CHOLMOD
namespace eit::recon {
bool cholmod_available() noexcept { return false; }
}  // namespace eit::recon
#endif

namespace eit::recon::detail {

struct SparseSpdSolver::Impl {
  std::unique_ptr<SparseLdlt> eigen;
  void* cholmod = nullptr;  // a factor owned by the CHOLMOD module (freed by it)
  ~Impl() {
#ifdef EIT_HAVE_CHOLMOD
    if (cholmod) cholmod_module().free(cholmod);
#endif
  }
};

SparseSpdSolver::SparseSpdSolver(const Eigen::SparseMatrix<double>& A, SparseBackend backend,
                                 int dim)
    : impl_(std::make_unique<Impl>()) {
  if (backend == SparseBackend::kAuto)
    backend = dim == 3 && cholmod_available() ? SparseBackend::kCholmod : SparseBackend::kEigen;
  if (backend == SparseBackend::kCholmod) {
#ifdef EIT_HAVE_CHOLMOD
    const CholmodModule& m = cholmod_module();
    if (!m.factor)
      throw std::invalid_argument(fmt::format(
          "sparse solver: cholmod requested, but the CHOLMOD module could not be loaded: {}",
          m.why));
    std::string error;
    impl_->cholmod = m.factor(&A, &error);
    if (!impl_->cholmod) throw std::runtime_error("forward model: " + error);
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
  if (impl_->cholmod) {
    Eigen::MatrixXd x;
    std::string error;
    if (!cholmod_module().solve(impl_->cholmod, &b, &x, &error))
      throw std::runtime_error("forward model: " + error);
    return x;
  }
#endif
  return solve_many(*impl_->eigen, b);
}

std::string_view SparseSpdSolver::backend_name() const noexcept {
  return impl_->eigen ? "eigen" : "cholmod";
}

}  // namespace eit::recon::detail
