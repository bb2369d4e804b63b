#pragma once
// One-step Gauss–Newton ("JAC"), pyEIT's JAC.setup:  H = (JᵀJ + λR)⁻¹ Jᵀ,  ds = −H·dv.
// Priors R: kotre diag(JᵀJ)^p, tikhonov I (pyEIT 'dgn'), lm diag(JᵀJ), noser diag(JᵀJ)^0.5
// (EIDORS prior_noser with its default exponent; p is ignored), laplacian LᵀL with L the
// element-adjacency graph Laplacian (edge-sharing neighbours).
// Diagonal R: H = R⁻¹Jᵀ(JR⁻¹Jᵀ + λI)⁻¹ through an n_meas × n_meas Cholesky (exact; no
// n_elem × n_elem matrix). Laplacian: exact through a sparse factorisation of LᵀL + e₀e₀ᵀ and a
// Woodbury correction of size n_meas + 1 (memory O(n_elem · n_meas), no n_elem² matrix; time
// ~0.1 s at 5.8k triangles, ~4 s at 100k on one core — docs/benchmarks.md).
// Output on elements. Allocates; no state; throws std::invalid_argument for bad options or a J
// with an all-zero column under a kotre/lm/noser prior (singular R).
#include <functional>
#include <string_view>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/reconstruction_matrix.hpp"

namespace eit::recon {

struct JacOptions {
  enum class Prior { kKotre, kTikhonov, kLm, kNoser, kLaplacian };
  Prior prior = Prior::kKotre;
  double p = 0.2;               // kotre exponent
  double lambda = 1e-3;         // regularisation weight
  bool jac_normalized = false;  // build from J / |v0| (pyEIT setup(jac_normalized=True))
  bool normalize = false;       // the model divides dv by |v_ref| (pyEIT solve(normalize=True))
  Eigen::VectorXd perm;         // linearisation point; empty = 1 everywhere
  // CPU threads for diag(JᵀJ), the CPU's n_meas-sized solve and H's float copy in the model
  // (≤ 0 = every core). Fixed tiles: H and the model are the same to the bit for every count.
  int threads = 0;
  // Where the n_meas-sized solve of the diagonal priors runs: given Jᵀ (n_elems × n_meas), R⁻¹'s
  // diagonal and λ, it returns H = R⁻¹Jᵀ(JR⁻¹Jᵀ + λI)⁻¹ (double). Empty: Eigen on this CPU. The
  // CLI plugs in the CUDA plugin's cuBLAS/cuSOLVER version when a device is there
  // (tools/src/backend_factory.hpp, jac_solve_on). Not used by the laplacian prior.
  using DiagonalSolve = std::function<Eigen::MatrixXd(const Eigen::MatrixXd& jt,
                                                      const Eigen::VectorXd& r_inv, double lambda)>;
  DiagonalSolve diagonal_solve;
  // The same solve returning H in the streaming model's form, float(−H) row-major (Model::H),
  // for a solver that converts where H is made (the CUDA plugin: 4 bytes a value come back, no
  // double H on the host). When set, build_jac of a diagonal prior uses it instead of
  // diagonal_solve, and its ReconstructionMatrix::H stays empty (model.H holds the result).
  using DiagonalSolveToModel = std::function<MatrixRowMajorF(
      const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv, double lambda)>;
  DiagonalSolveToModel diagonal_solve_to_model;
};

std::string_view to_string(JacOptions::Prior prior) noexcept;
JacOptions::Prior parse_jac_prior(std::string_view text);  // kotre|tikhonov|dgn|lm|noser|laplacian

// The diagonal priors' solve on this CPU (Eigen): H = diag(r_inv)·Jᵀ(J diag(r_inv) Jᵀ + λI)⁻¹,
// the default of JacOptions::diagonal_solve, over `threads` threads (≤ 0 = every core) by fixed
// tiles, so H is the same to the bit for every thread count (src/jac_diagonal_solve.cpp).
// Throws std::runtime_error if not positive definite.
Eigen::MatrixXd jac_diagonal_solve_cpu(const Eigen::MatrixXd& jt, const Eigen::VectorXd& r_inv,
                                       double lambda, int threads = 0);
// The same H in the model's form, float(−H) row-major, converted tile by tile (no double H of
// n_elems × n_meas is held): a JacOptions::diagonal_solve_to_model for the CPU.
MatrixRowMajorF jac_diagonal_solve_cpu_model(const Eigen::MatrixXd& jt,
                                             const Eigen::VectorXd& r_inv, double lambda,
                                             int threads = 0);

// H from a given Jacobian (n_meas × n_elems); mesh needed only for the Laplacian prior.
Eigen::MatrixXd jac_matrix(const Eigen::MatrixXd& J, const JacOptions& options, const Mesh& mesh);
// The same from Jᵀ (n_elems × n_meas, ForwardModel::jacobian_transposed), no transposed copy.
Eigen::MatrixXd jac_matrix_from_transposed(const Eigen::MatrixXd& jt, const JacOptions& options,
                                           const Mesh& mesh);

// H is empty when options.diagonal_solve_to_model was used (see there).
ReconstructionMatrix build_jac(ForwardModel& forward, const JacOptions& options = {});
// The same from a Jᵀ already computed by forward.jacobian_transposed(options.perm,
// options.jac_normalized) (a 3-D Jacobian is worth computing once).
ReconstructionMatrix build_jac(ForwardModel& forward, const Eigen::MatrixXd& jt,
                               const JacOptions& options);

}  // namespace eit::recon
