#pragma once
// Internal to the Gmsh module: the layers of the extruded mesher (mesh_generator_3d.hpp,
// Mesher::kExtruded). Pure functions; no Gmsh.
#include <vector>

namespace eit::recon::detail {

// The element size the extruded mesher asks for at distance d from a refinement centre:
// `fine` within `full`, growing linearly to `coarse` at full + ramp, `coarse` beyond (Gmsh's
// Threshold field with DistMin = full, DistMax = full + ramp).
double graded_size(double d, double fine, double coarse, double full, double ramp);

// Layers between z0 < z1 whose thickness follows graded_size of the distance to the nearest of
// `centres` (ring heights): their count is the integral of dz / size rounded up (at least 1), and
// their interfaces are equally spaced in that integral. Returns the cumulative heights as
// fractions of z1 − z0, ascending, the last exactly 1 (geo::extrude's `heights`).
std::vector<double> graded_layer_fractions(double z0, double z1, const std::vector<double>& centres,
                                           double fine, double coarse, double full, double ramp);

}  // namespace eit::recon::detail
