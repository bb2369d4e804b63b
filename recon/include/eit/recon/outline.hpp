#pragma once
// Body outlines for mesh generation and the default electrode placement on them.
//
// Every outline is walked by arc length s ∈ [0, perimeter), starting at the 9 o'clock point (where
// the ray from the outline's centroid towards −x leaves the body) and running clockwise, the way
// pyEIT numbers electrodes. N electrodes sit at equal arc length s_k = k·perimeter/N; on a circle
// of radius r this is exactly pyEIT's placement: electrode k at r·(−cos θk, sin θk), θk = 2πk/N.
// Plain values, no shared state: any thread may use its own OutlinePath.
#include <variant>
#include <vector>

#include <Eigen/Core>

namespace eit::recon {

struct CircleOutline {
  double radius = 1.0;  // centred at the origin
};

struct EllipseOutline {
  double semi_x = 1.0;  // semi-axis along x
  double semi_y = 1.0;  // semi-axis along y; centred at the origin
};

// A simple polygon (e.g. a thorax contour) given by its corners in either orientation; closed
// implicitly (do not repeat the first point).
struct PolygonOutline {
  std::vector<Eigen::Vector2d> points;
};

using Outline = std::variant<CircleOutline, EllipseOutline, PolygonOutline>;

// The outline as a clockwise arc-length path. Throws std::invalid_argument for a degenerate
// outline (non-positive radius/semi-axis; polygon with < 3 corners, repeated corners,
// self-intersections or zero area), naming the value found.
class OutlinePath {
 public:
  explicit OutlinePath(const Outline& outline);

  double perimeter() const noexcept { return perimeter_; }
  // The boundary point at arc length s (taken modulo the perimeter).
  Eigen::Vector2d point_at(double s) const;
  // Curved outlines: the angle parameter t at arc length s, point = (−a cos t, b sin t).
  double parameter_at(double s) const;
  // Arc positions of the polygon's corners, ascending (empty for circle and ellipse).
  const std::vector<double>& corner_positions() const noexcept { return corner_s_; }
  bool is_curved() const noexcept { return !polygon_; }
  const Outline& outline() const noexcept { return outline_; }

 private:
  double ellipse_length_to(double t) const;

  Outline outline_;
  double perimeter_ = 0;
  bool polygon_ = false;
  double a_ = 1, b_ = 1;                   // circle/ellipse semi-axes
  std::vector<double> table_t_, table_s_;  // ellipse: arc length at tabulated parameters
  std::vector<Eigen::Vector2d> corners_;   // polygon: clockwise, corners_[0] at s = 0
  std::vector<double> corner_s_;           // arc position of each corner
};

// The default electrode positions: N points at equal arc length, clockwise from 9 o'clock.
std::vector<Eigen::Vector2d> electrode_positions(const Outline& outline, int n_electrodes);

}  // namespace eit::recon
