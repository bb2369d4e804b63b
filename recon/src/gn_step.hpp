#pragma once
// Internal: one regularised Gauss–Newton step d = (JᵀJ + λR)⁻¹ Jᵀ r from Jᵀ (n_elems × n_meas),
// through whichever normal equations are smaller (see gauss_newton.hpp). Allocates; no state.
#include <chrono>

#include <Eigen/Core>

#include "eit/recon/gauss_newton.hpp"

namespace eit::recon::detail {

struct GnStepTimes {
  double system = 0, solve = 0;  // seconds: forming the normal matrix; factorising + solving
};

// Splits one step's time between its two phases: from construction to system_formed() it adds to
// times.system, from there to solved() to times.solve.
class GnStepTimer {
 public:
  explicit GnStepTimer(GnStepTimes& times) : times_(times), start_(Clock::now()) {}
  void system_formed() { times_.system += lap(); }
  void solved() { times_.solve += lap(); }

 private:
  using Clock = std::chrono::steady_clock;
  double lap() {
    const Clock::time_point now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - start_).count();
    start_ = now;
    return seconds;
  }
  GnStepTimes& times_;
  Clock::time_point start_;
};

// Solve a·x = b for Hermitian positive definite `a`, reading its lower triangle; both throw
// std::runtime_error "gn: <what> is not positive definite" otherwise (gn_step_solve.cpp).
// Real: factorised in place over `threads` threads (gn_dense.hpp; a is overwritten).
Eigen::VectorXd solve_positive_definite(Eigen::MatrixXd& a, const Eigen::VectorXd& b, int threads,
                                        const char* what);
// Complex: Eigen's LLT on one thread (a is left as it is).
Eigen::VectorXcd solve_positive_definite(const Eigen::MatrixXcd& a, const Eigen::VectorXcd& b,
                                         const char* what);

// Throws std::runtime_error when the normal matrix is not positive definite (e.g. a kotre/lm
// prior with an element of zero sensitivity at λ = 0).
Eigen::VectorXd gn_step(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r, double lambda,
                        const GnOptions& options, const Mesh& mesh, GnStepTimes& times);

// The complex step d = (JᴴJ + λR)⁻¹ Jᴴ r from Jᵀ (n_elems × rows, the plain transpose of the
// holomorphic J), R real from diag(JᴴJ); the smaller of the Hermitian normal matrices
// (R⁻¹Jᴴ(J R⁻¹ Jᴴ + λI)⁻¹ r or the n_elems-sized one), complex Cholesky on one thread
// (gn_step_complex.cpp).
Eigen::VectorXcd gn_step_complex(const Eigen::MatrixXcd& jt, const Eigen::VectorXcd& r,
                                 double lambda, const GnOptions& options, const Mesh& mesh,
                                 GnStepTimes& times);

// R's diagonal for kotre/lm/noser/tikhonov from Jᵀ (diag(JᵀJ) = squared row norms of Jᵀ).
Eigen::VectorXd gn_diagonal_prior(const Eigen::MatrixXd& jt, const GnOptions& options);
// The same from diag(JᵀJ) already at hand (the n_elems-sized path reads it off JᵀJ).
Eigen::VectorXd gn_prior_from_diagonal(const Eigen::VectorXd& diag_jtj, const GnOptions& options);

}  // namespace eit::recon::detail
