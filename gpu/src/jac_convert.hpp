#pragma once
// JAC's last step on the device: the streaming model's H from the solve's column-major double
// product P (n_rows × n_cols, P = S M⁻¹ of cuda_jac_solve.hpp) and the row scale √r_inv:
//   out[r · n_cols + c] = float(−(scale[r] · P[c · n_rows + r]))   (row-major float −H),
// rounded to nearest as the host's static_cast<float> does. Enqueued on `stream`; throws
// std::runtime_error when the launch fails.
#include <cuda_runtime_api.h>

namespace eit::gpu::detail {

void launch_negated_float_rows(const double* p, const double* scale, float* out, int n_rows,
                               int n_cols, cudaStream_t stream);

}  // namespace eit::gpu::detail
