#pragma once
// The contract between eit_recon's cholmod_loader.cpp and the CHOLMOD module libeit_cholmod.so
// (cholmod_module.cpp), built from the same tree with the same compiler: C symbols taking C++
// types. CHOLMOD pulls in BLAS/LAPACK (OpenBLAS: ~14,000 relocations, ~7-10 ms of every start
// of eitstream); in a module it is mapped only by a process that factorises a 3-D FEM system.
// None of the functions throws.
#include <string>

#include <Eigen/Core>
#include <Eigen/SparseCore>

namespace eit::recon::detail {

inline constexpr const char* kCholmodModuleFile = "libeit_cholmod.so";
inline constexpr const char* kCholmodFactorEntry = "eit_cholmod_factor_v1";
inline constexpr const char* kCholmodSolveEntry = "eit_cholmod_solve_v1";
inline constexpr const char* kCholmodFreeEntry = "eit_cholmod_free_v1";

// Supernodal Cholesky of A (lower triangle used). Returns an opaque factor, or nullptr with
// *error set (not positive definite, out of memory).
using CholmodFactorFn = void* (*)(const Eigen::SparseMatrix<double>* a, std::string* error);
// x = A⁻¹ b for every column of b. Returns false with *error set on failure.
using CholmodSolveFn = bool (*)(const void* factor, const Eigen::MatrixXd* b, Eigen::MatrixXd* x,
                                std::string* error);
using CholmodFreeFn = void (*)(void* factor);

}  // namespace eit::recon::detail
