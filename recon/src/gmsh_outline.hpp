#pragma once
// Internal to the Gmsh module: the body outline at z = 0 in Gmsh's geo kernel, the base both the
// 2-D generator (meshed as a plane surface) and the 3-D generator (extruded) start from.
#include <gmsh.h>

#include <variant>
#include <vector>

#include "eit/recon/outline.hpp"

namespace eit::recon::detail {

struct GeoOutline {
  std::vector<int> points;  // one per vertex, in the vertices' order
  std::vector<int> curves;  // curves[i] joins points[i] to the next (the last closes the loop)
};

// A point per vertex (mesh size h0) and the curve from each to the next: lines on a polygon,
// circle arcs about the origin on a circle, and on an ellipse that is not a circle ellipse arcs
// (their major-axis point on the longer semi-axis). Vertex: any type with an Eigen::Vector2d `p`;
// the caller places them so that every arc spans less than π.
template <typename Vertex>
GeoOutline add_geo_outline(const OutlinePath& path, const std::vector<Vertex>& verts, double h0) {
  namespace geo = gmsh::model::geo;
  GeoOutline out;
  for (const auto& v : verts) out.points.push_back(geo::addPoint(v.p.x(), v.p.y(), 0, h0));
  int centre = 0, major = 0;
  if (path.is_curved()) {
    centre = geo::addPoint(0, 0, 0, h0);
    const auto* e = std::get_if<EllipseOutline>(&path.outline());
    if (e && e->semi_x != e->semi_y)
      major = e->semi_x > e->semi_y ? geo::addPoint(e->semi_x, 0, 0, h0)
                                    : geo::addPoint(0, e->semi_y, 0, h0);
  }
  const std::vector<int>& p = out.points;
  for (size_t i = 0; i < p.size(); ++i) {
    const int a = p[i], b = p[(i + 1) % p.size()];
    if (!path.is_curved())
      out.curves.push_back(geo::addLine(a, b));
    else if (major == 0)
      out.curves.push_back(geo::addCircleArc(a, centre, b));
    else
      out.curves.push_back(geo::addEllipseArc(a, centre, major, b));
  }
  return out;
}

}  // namespace eit::recon::detail
