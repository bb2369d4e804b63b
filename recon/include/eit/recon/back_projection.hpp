#pragma once
// pyEIT's back-projection (bp.BP.setup): B[k, i] = 1 when node i lies between the equipotentials
// of measurement k's two electrodes (fmin < f_i ≤ fmax, f = potentials of k's drive), H = Bᵀ
// (n_nodes × n_meas, output per node); weight "simple" scales node i's row by
// (1.01 r_max − |x_i|)/(1.01 r_max). pyEIT's BP normalises by sign(v0) (not |v0|): with
// normalize=true the model folds sign(v_ref) into its columns and keeps model.normalize = false.
// Allocates; no state.
#include <string_view>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/reconstruction_matrix.hpp"

namespace eit::recon {

struct BpOptions {
  enum class Weight { kNone, kSimple };
  Weight weight = Weight::kNone;
  bool normalize = false;
  Eigen::VectorXd perm;  // empty = 1 everywhere
};

BpOptions::Weight parse_bp_weight(std::string_view text);  // none|simple

ReconstructionMatrix build_bp(ForwardModel& forward, const BpOptions& options = {});

}  // namespace eit::recon
