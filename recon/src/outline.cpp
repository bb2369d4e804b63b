#include "eit/recon/outline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include <fmt/format.h>

namespace eit::recon {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr int kEllipseTable = 1024;  // intervals over [0, 2π) for the arc-length table

// 5-point Gauss–Legendre on [lo, hi] of the ellipse speed |dp/dt| = sqrt(a² sin² t + b² cos² t).
double ellipse_arc(double a, double b, double lo, double hi) {
  static constexpr double x[5] = {0.0, -0.5384693101056831, 0.5384693101056831, -0.9061798459386640,
                                  0.9061798459386640};
  static constexpr double w[5] = {0.5688888888888889, 0.4786286704993665, 0.4786286704993665,
                                  0.2369268850561891, 0.2369268850561891};
  const double half = 0.5 * (hi - lo), mid = 0.5 * (hi + lo);
  double sum = 0;
  for (int i = 0; i < 5; ++i) {
    const double t = mid + half * x[i];
    sum += w[i] * std::hypot(a * std::sin(t), b * std::cos(t));
  }
  return sum * half;
}

double cross(const Eigen::Vector2d& u, const Eigen::Vector2d& v) {
  return u.x() * v.y() - u.y() * v.x();
}

bool segments_cross(const Eigen::Vector2d& p, const Eigen::Vector2d& p2, const Eigen::Vector2d& q,
                    const Eigen::Vector2d& q2) {
  const Eigen::Vector2d r = p2 - p, s = q2 - q;
  const double d = cross(r, s);
  if (d == 0) return false;  // parallel: collinear overlaps show up as repeated/zero-area corners
  const double t = cross(q - p, s) / d, u = cross(q - p, r) / d;
  return t > 0 && t < 1 && u > 0 && u < 1;
}

}  // namespace

OutlinePath::OutlinePath(const Outline& outline) : outline_(outline) {
  if (const auto* c = std::get_if<CircleOutline>(&outline)) {
    if (!(c->radius > 0) || !std::isfinite(c->radius))
      throw std::invalid_argument(
          fmt::format("circle outline: radius {}, expected > 0", c->radius));
    a_ = b_ = c->radius;
    perimeter_ = 2 * kPi * c->radius;
    return;
  }
  if (const auto* e = std::get_if<EllipseOutline>(&outline)) {
    if (!(e->semi_x > 0) || !(e->semi_y > 0) || !std::isfinite(e->semi_x) ||
        !std::isfinite(e->semi_y))
      throw std::invalid_argument(fmt::format(
          "ellipse outline: semi-axes {} × {}, expected both > 0", e->semi_x, e->semi_y));
    a_ = e->semi_x;
    b_ = e->semi_y;
    table_t_.resize(kEllipseTable + 1);
    table_s_.resize(kEllipseTable + 1);
    for (int i = 0; i <= kEllipseTable; ++i) {
      table_t_[i] = 2 * kPi * i / kEllipseTable;
      table_s_[i] =
          i == 0 ? 0 : table_s_[i - 1] + ellipse_arc(a_, b_, table_t_[i - 1], table_t_[i]);
    }
    perimeter_ = table_s_.back();
    return;
  }
  polygon_ = true;
  std::vector<Eigen::Vector2d> pts = std::get<PolygonOutline>(outline).points;
  const size_t n = pts.size();
  if (n < 3)
    throw std::invalid_argument(fmt::format("polygon outline: {} points, expected at least 3", n));
  for (size_t i = 0; i < n; ++i) {
    if (!pts[i].allFinite())
      throw std::invalid_argument(fmt::format("polygon outline: point {} is not finite", i));
    if ((pts[(i + 1) % n] - pts[i]).norm() == 0)
      throw std::invalid_argument(
          fmt::format("polygon outline: points {} and {} coincide", i, (i + 1) % n));
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 2; j < n; ++j) {
      if (i == 0 && j == n - 1) continue;  // neighbours through the closing edge
      if (segments_cross(pts[i], pts[(i + 1) % n], pts[j], pts[(j + 1) % n]))
        throw std::invalid_argument(
            fmt::format("polygon outline: edges {}–{} and {}–{} cross, expected a simple polygon",
                        i, (i + 1) % n, j, (j + 1) % n));
    }
  double area2 = 0;
  Eigen::Vector2d centroid = Eigen::Vector2d::Zero();
  for (size_t i = 0; i < n; ++i) {
    const double c = cross(pts[i], pts[(i + 1) % n]);
    area2 += c;
    centroid += c * (pts[i] + pts[(i + 1) % n]);
  }
  if (std::abs(area2) < 1e-14 * (pts[0] - pts[1]).squaredNorm())
    throw std::invalid_argument("polygon outline: zero area");
  centroid /= 3 * area2;
  if (area2 > 0) std::reverse(pts.begin(), pts.end());  // clockwise from here on

  // The start: the ray from the centroid towards −x, at its last crossing of the outline (the
  // leftmost exit, so a concave contour still starts on its outer left side).
  double best_x = std::numeric_limits<double>::infinity();
  size_t best_edge = 0;
  for (size_t i = 0; i < n; ++i) {
    const Eigen::Vector2d p = pts[i], q = pts[(i + 1) % n];
    if ((p.y() > centroid.y()) == (q.y() > centroid.y())) continue;
    const double x = p.x() + (centroid.y() - p.y()) * (q.x() - p.x()) / (q.y() - p.y());
    if (x <= centroid.x() && x < best_x) {
      best_x = x;
      best_edge = i;
    }
  }
  if (!std::isfinite(best_x))
    throw std::invalid_argument("polygon outline: no boundary point left of the centroid");
  const Eigen::Vector2d start(best_x, centroid.y());
  corners_.push_back(start);
  for (size_t k = 1; k <= n; ++k) {
    const Eigen::Vector2d& p = pts[(best_edge + k) % n];
    if ((p - corners_.back()).norm() > 1e-12 * (1 + p.norm())) corners_.push_back(p);
  }
  if ((corners_.back() - start).norm() <= 1e-12 * (1 + start.norm())) corners_.pop_back();
  corner_s_.resize(corners_.size());
  double s = 0;
  for (size_t i = 0; i < corners_.size(); ++i) {
    corner_s_[i] = s;
    s += (corners_[(i + 1) % corners_.size()] - corners_[i]).norm();
  }
  perimeter_ = s;
}

double OutlinePath::ellipse_length_to(double t) const {
  const double step = 2 * kPi / kEllipseTable;
  const int i = std::clamp(static_cast<int>(t / step), 0, kEllipseTable - 1);
  return table_s_[i] + ellipse_arc(a_, b_, table_t_[i], t);
}

double OutlinePath::parameter_at(double s) const {
  s = std::fmod(s, perimeter_);
  if (s < 0) s += perimeter_;
  if (polygon_) return 0;
  if (a_ == b_) return s / a_;
  // Invert the tabulated arc length, then polish with Newton steps on the exact integral.
  const auto it = std::upper_bound(table_s_.begin(), table_s_.end(), s);
  const int i = std::clamp(static_cast<int>(it - table_s_.begin()) - 1, 0, kEllipseTable - 1);
  double t = table_t_[i] +
             (s - table_s_[i]) / (table_s_[i + 1] - table_s_[i]) * (table_t_[i + 1] - table_t_[i]);
  for (int iter = 0; iter < 20; ++iter) {
    const double speed = std::hypot(a_ * std::sin(t), b_ * std::cos(t));
    const double dt = (ellipse_length_to(t) - s) / speed;
    t = std::clamp(t - dt, table_t_[i], table_t_[i + 1]);
    if (std::abs(dt) < 1e-15) break;
  }
  return t;
}

Eigen::Vector2d OutlinePath::point_at(double s) const {
  s = std::fmod(s, perimeter_);
  if (s < 0) s += perimeter_;
  if (!polygon_) {
    const double t = parameter_at(s);
    return {-a_ * std::cos(t), b_ * std::sin(t)};
  }
  const auto it = std::upper_bound(corner_s_.begin(), corner_s_.end(), s);
  const size_t i = static_cast<size_t>(it - corner_s_.begin()) - 1;
  const Eigen::Vector2d p = corners_[i], q = corners_[(i + 1) % corners_.size()];
  const double len = (q - p).norm();
  return p + (s - corner_s_[i]) / len * (q - p);
}

std::vector<Eigen::Vector2d> electrode_positions(const Outline& outline, int n_electrodes) {
  if (n_electrodes < 1)
    throw std::invalid_argument(
        fmt::format("electrode placement: {} electrodes, expected at least 1", n_electrodes));
  std::vector<Eigen::Vector2d> out;
  if (const auto* c = std::get_if<CircleOutline>(&outline)) {
    OutlinePath check(outline);  // validates the radius
    for (int k = 0; k < n_electrodes; ++k) {
      const double theta = 2 * kPi * k / n_electrodes;
      out.emplace_back(-c->radius * std::cos(theta), c->radius * std::sin(theta));
    }
    return out;
  }
  const OutlinePath path(outline);
  for (int k = 0; k < n_electrodes; ++k)
    out.push_back(path.point_at(path.perimeter() * k / n_electrodes));
  return out;
}

}  // namespace eit::recon
