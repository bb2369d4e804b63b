// Expansion of an EIDORS symmetry-packed reconstruction matrix (see eidors_unpack.hpp).
//
// The packed matrix holds the block B(i, j, k, l) for measuring electrode i, driving electrode j
// (i − j = 2..14) and pixel (k, l) in one octant (X = l − 15.5 < 0, Y = k − 15.5 < 0, X ≥ Y,
// |X ± Y| < 25), both in MATLAB column-major order. The full matrix follows by adding the block's
// images under reciprocity (i ↔ j), the left-right mirror (i → 15 − i, k → 31 − k), the up-down
// mirror (i → 7 − i / 23 − i, l → 31 − l) and the transposition (i → 11 − i / 27 − i, k ↔ l),
// applied in that order, then one final l → 31 − l flip. Its rows are then p = k + 32 l and its
// columns q = i + 16 j restricted to |i − j| = 2..14.
#include "eit/recon/eidors_unpack.hpp"

#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace eit::recon {
namespace {

constexpr int kE = 16, kG = 32;

// The 4-D block B(i, j, k, l) as a flat array.
class Block {
 public:
  Block() : v_(static_cast<size_t>(kE) * kE * kG * kG, 0.0) {}
  double& operator()(int i, int j, int k, int l) { return v_[((i * kE + j) * kG + k) * kG + l]; }
  double operator()(int i, int j, int k, int l) const {
    return v_[((i * kE + j) * kG + k) * kG + l];
  }

 private:
  std::vector<double> v_;
};

template <typename F>
Block add_image(const Block& b, F source) {
  Block out;
  for (int i = 0; i < kE; ++i)
    for (int j = 0; j < kE; ++j)
      for (int k = 0; k < kG; ++k)
        for (int l = 0; l < kG; ++l) out(i, j, k, l) = b(i, j, k, l) + source(b, i, j, k, l);
  return out;
}

}  // namespace

Eigen::MatrixXd unpack_eidors_greit(const Eigen::MatrixXd& packed) {
  if (packed.rows() != kEidorsPackedRows || packed.cols() != kEidorsPackedCols)
    throw std::invalid_argument(fmt::format(
        "EIDORS packed matrix is {} × {}, expected {} × {} (16 electrodes, 32 × 32 grid)",
        packed.rows(), packed.cols(), kEidorsPackedRows, kEidorsPackedCols));
  // Packed rows: (i, j) with i − j in 2..14, column-major (i fastest).
  std::vector<std::pair<int, int>> pairs;
  for (int j = 0; j < kE; ++j)
    for (int i = 0; i < kE; ++i)
      if (i - j >= 2 && i - j <= 14) pairs.emplace_back(i, j);
  // Packed columns: pixels (k, l) of the octant, column-major (k fastest).
  std::vector<std::pair<int, int>> pixels;
  for (int l = 0; l < kG; ++l)
    for (int k = 0; k < kG; ++k) {
      const double x = l - 15.5, y = k - 15.5;
      if (x < 0 && y < 0 && x >= y && std::abs(x - y) < 25 && std::abs(x + y) < 25)
        pixels.emplace_back(k, l);
    }
  if (pairs.size() != kEidorsPackedRows || pixels.size() != kEidorsPackedCols)
    throw std::logic_error("EIDORS unpack: symmetry index sets have the wrong size");

  Block b;
  for (size_t r = 0; r < pairs.size(); ++r)
    for (size_t c = 0; c < pixels.size(); ++c)
      b(pairs[r].first, pairs[r].second, pixels[c].first, pixels[c].second) =
          packed(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c));

  auto ud = [](int i) { return i <= 7 ? 7 - i : 23 - i; };
  auto tr = [](int i) { return i <= 11 ? 11 - i : 27 - i; };
  b = add_image(b, [](const Block& s, int i, int j, int k, int l) { return s(j, i, k, l); });
  b = add_image(b, [](const Block& s, int i, int j, int k, int l) {
    return s(kE - 1 - i, kE - 1 - j, kG - 1 - k, l);
  });
  b = add_image(b, [&](const Block& s, int i, int j, int k, int l) {
    return s(ud(i), ud(j), k, kG - 1 - l);
  });
  b = add_image(b,
                [&](const Block& s, int i, int j, int k, int l) { return s(tr(i), tr(j), l, k); });

  // EIDORS row p = k + 32·l' with l' = 31 − l (its final flip). Read as an image, p is our
  // row-major index with electrode 0 at 12 o'clock; rotating by +90° to put it at 9 o'clock maps
  // our pixel (r, c) to p = (31 − c)·32 + r. Columns: measuring i, driving j, |i − j| in 2..14,
  // ordered by j then i — protocol 'std'.
  Eigen::MatrixXd out(kG * kG, 208);
  int col = 0;
  for (int j = 0; j < kE; ++j)
    for (int i = 0; i < kE; ++i) {
      const int d = std::abs(i - j);
      if (d < 2 || d > 14) continue;
      for (int r = 0; r < kG; ++r)
        for (int c = 0; c < kG; ++c) {
          const int p = (kG - 1 - c) * kG + r;
          const int k = p % kG, l = kG - 1 - p / kG;
          out(r * kG + c, col) = b(i, j, k, l);
        }
      ++col;
    }
  return out;
}

}  // namespace eit::recon
