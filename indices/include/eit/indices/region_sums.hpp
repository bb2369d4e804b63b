#pragma once
// Region sums of one image: the global value and every region of a BodyLayout, in its order.
// Sums run in double over the body's values only, scaled by `sign` (−1 turns eitstream's
// conductivity-change images into impedance change). No allocation; `cells` is scratch of at
// least 4 · layers doubles, `out` has layout.n_regions() entries.
#include <span>

#include "eit/indices/body_layout.hpp"

namespace eit::indices {

void sum_regions(const BodyLayout& layout, std::span<const float> image, double sign,
                 std::span<double> cells, std::span<double> out) noexcept;
void sum_regions(const BodyLayout& layout, std::span<const double> image, double sign,
                 std::span<double> cells, std::span<double> out) noexcept;

}  // namespace eit::indices
