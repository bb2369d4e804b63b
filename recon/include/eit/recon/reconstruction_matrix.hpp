#pragma once
// The result of every reconstruction-matrix builder (build_jac, build_bp, build_greit):
//   H      double, pyEIT's convention ds = −H · dv (dv = v − v_ref, or dv / |v_ref| if normalised),
//   model  the streaming form: float H with the sign folded in (image = model.H · dv), v_ref,
//          normalize flag, protocol, geometry, algorithm name and parameters; model.id left empty
//          (the Model-file code computes it).
#include <Eigen/Core>

#include "eit/recon/model.hpp"

namespace eit::recon {

struct ReconstructionMatrix {
  Eigen::MatrixXd H;  // n_out × n_meas, pyEIT sign
  Model model;
};

}  // namespace eit::recon
