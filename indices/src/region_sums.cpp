#include "eit/indices/region_sums.hpp"

#include <algorithm>

namespace eit::indices {
namespace {

template <typename T>
void sum_regions_impl(const BodyLayout& layout, std::span<const T> image, double sign,
                      std::span<double> cells, std::span<double> out) noexcept {
  const int layers = layout.layers();
  std::fill_n(cells.begin(), 4 * layers, 0.0);
  const auto& idx = layout.inside_index();
  double global = 0;
  for (size_t k = 0; k < idx.size(); ++k) {
    const double v = image[idx[k]];
    global += v;
    cells[layout.cell(k)] += v;
  }
  out[0] = sign * global;
  double right = 0, left = 0, vr = 0, vl = 0, dr = 0, dl = 0;
  for (int l = 0; l < layers; ++l) {
    const double* c = &cells[4 * l];  // ventral right, ventral left, dorsal right, dorsal left
    out[1 + l] = sign * (c[0] + c[1] + c[2] + c[3]);
    right += c[0] + c[2];
    left += c[1] + c[3];
    vr += c[0];
    vl += c[1];
    dr += c[2];
    dl += c[3];
  }
  double* o = &out[1 + layers];
  o[0] = sign * right;
  o[1] = sign * left;
  o[2] = sign * vr;
  o[3] = sign * vl;
  o[4] = sign * dr;
  o[5] = sign * dl;
  for (size_t r = 0; r < layout.n_rois(); ++r) {
    double s = 0;
    for (uint32_t i : layout.roi(r)) s += image[i];
    out[layout.roi_offset() + r] = sign * s;
  }
}

}  // namespace

void sum_regions(const BodyLayout& layout, std::span<const float> image, double sign,
                 std::span<double> cells, std::span<double> out) noexcept {
  sum_regions_impl(layout, image, sign, cells, out);
}
void sum_regions(const BodyLayout& layout, std::span<const double> image, double sign,
                 std::span<double> cells, std::span<double> out) noexcept {
  sum_regions_impl(layout, image, sign, cells, out);
}

}  // namespace eit::indices
