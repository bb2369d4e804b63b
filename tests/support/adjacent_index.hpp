#pragma once
// Index of (drive j, measuring i) among the 208 measurements of the 16-electrode adjacent
// protocol ('std': measuring pairs i, i+1 that touch neither driven electrode j, j+1; ordered by
// j then i), or −1 for a pair left out. EIDORS' and IIRC's tables hold all 16 × 16 pairs.
#include <cstdlib>

namespace eit::test {

inline int adjacent_meas_index(int j, int i) {
  int q = 0;
  for (int jj = 0; jj < 16; ++jj)
    for (int ii = 0; ii < 16; ++ii) {
      const int d = std::abs(ii - jj);
      if (d < 2 || d > 14) continue;
      if (jj == j && ii == i) return q;
      ++q;
    }
  return -1;
}

}  // namespace eit::test
