// libeit_cholmod.so: SuiteSparse CHOLMOD's supernodal Cholesky behind the C entry points of
// cholmod_module.hpp (loaded by cholmod_loader.cpp on the first 3-D factorisation).
#include "cholmod_module.hpp"

#include <exception>
#include <memory>

#include <Eigen/CholmodSupport>

namespace {

using Factor = Eigen::CholmodSupernodalLLT<Eigen::SparseMatrix<double>, Eigen::Lower>;

}  // namespace

extern "C" __attribute__((visibility("default"))) void* eit_cholmod_factor_v1(
    const Eigen::SparseMatrix<double>* a, std::string* error) {
  try {
    auto f = std::make_unique<Factor>();
    f->compute(*a);
    if (f->info() != Eigen::Success) {
      *error = "CHOLMOD factorisation of the FEM system failed (is the mesh connected?)";
      return nullptr;
    }
    return f.release();
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
}

extern "C" __attribute__((visibility("default"))) bool eit_cholmod_solve_v1(
    const void* factor, const Eigen::MatrixXd* b, Eigen::MatrixXd* x, std::string* error) {
  try {
    const auto* f = static_cast<const Factor*>(factor);
    *x = f->solve(*b);
    if (f->info() != Eigen::Success) {
      *error = "CHOLMOD solve failed";
      return false;
    }
    return true;
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
}

extern "C" __attribute__((visibility("default"))) void eit_cholmod_free_v1(void* factor) {
  delete static_cast<Factor*>(factor);
}
