// matrix_stats (model_header.hpp): one pass over H, accumulated in double.
#include <algorithm>
#include <cmath>

#include "eit/recon/model_header.hpp"

namespace eit::recon {

MatrixStats matrix_stats(const MatrixRowMajorF& H) {
  MatrixStats st;
  double sum_abs = 0, sum_sq = 0;
  for (Eigen::Index i = 0; i < H.rows(); ++i) {
    bool all_zero = true;
    const float* row = H.data() + i * H.cols();
    for (Eigen::Index j = 0; j < H.cols(); ++j) {
      const double v = row[j];
      if (i == 0 && j == 0) st.min = st.max = v;
      st.min = std::min(st.min, v);
      st.max = std::max(st.max, v);
      sum_abs += std::abs(v);
      sum_sq += v * v;
      all_zero = all_zero && v == 0;
    }
    st.zero_rows += all_zero;
  }
  st.mean_abs = sum_abs / static_cast<double>(std::max<Eigen::Index>(H.size(), 1));
  st.frobenius = std::sqrt(sum_sq);
  return st;
}

}  // namespace eit::recon
