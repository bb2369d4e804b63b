#pragma once
// EIDORS stores reconstruction matrices of a circular 16-electrode adjacent/adjacent system packed
// by their 16-fold symmetry (reciprocity, left-right and up-down mirror, transposition): the
// GREIT v1.0 matrix (GREIT_v10_Circ_Matrix.mat) is 104 × 120 packed, 1024 × 208 unpacked
// (EIDORS' unpack_reconst_matrix). This is our own implementation of that expansion.
//
// The result is in eitstream's conventions, ready to be H:
//   rows    = pixels of a 32 × 32 grid, row-major, row index = y ascending, column = x ascending;
//   columns = the 208 adjacent measurements in protocol order 'std' (drive j → j+1, measuring
//             pairs m, m+1 ascending, pairs touching a driven electrode left out).
// Orientation: EIDORS numbers the electrodes clockwise from the top (12 o'clock); the image is
// rotated by 90° so that electrode k sits where eitstream/pyEIT put it, (−cos θk, sin θk), i.e.
// electrode 0 at 9 o'clock, clockwise.
#include <Eigen/Core>

namespace eit::recon {

inline constexpr int kEidorsPackedRows = 104;  // measurement pairs kept by the symmetry
inline constexpr int kEidorsPackedCols = 120;  // pixels of one octant of the 32 × 32 image

// Throws std::invalid_argument unless packed is 104 × 120.
Eigen::MatrixXd unpack_eidors_greit(const Eigen::MatrixXd& packed);

}  // namespace eit::recon
