#pragma once
// Internal FEM building blocks shared by ForwardModel and the builders: P1 element geometry,
// stiffness assembly and the complete-electrode boundary terms. Allocate; no state.
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "eit/recon/mesh.hpp"

namespace eit::recon::detail {

// Per triangle (a, b, c): edge vectors s0 = c − b, s1 = a − c, s2 = b − a (s_i is opposite node i)
// and the area. Unit-conductivity local stiffness K_e = s sᵀ / (4A), i.e. ∇φ_i·∇φ_j = s_i·s_j/4A².
struct ElementGeometry {
  Eigen::MatrixXd sx;    // n_elems × 3
  Eigen::MatrixXd sy;    // n_elems × 3
  Eigen::VectorXd area;  // n_elems
};
ElementGeometry element_geometry(const Mesh& mesh);

// A stretch of boundary edge a→b (length L) covered by an electrode for edge parameter
// t ∈ [t0, t1] (t = 0 at a, 1 at b).
struct ElectrodeSegment {
  int a, b;
  double length, t0, t1;
};
using ElectrodeSegments = std::vector<std::vector<ElectrodeSegment>>;

// From mesh.electrode_patches (whole edges between consecutive patch nodes) or, when empty, an arc
// of `width` centred on each electrode node. Throws std::invalid_argument naming the electrode.
ElectrodeSegments electrode_segments(const Mesh& mesh, double width);

// ∫ over a segment of φ_a φ_a, φ_a φ_b, φ_b φ_b, φ_a, φ_b (linear hat functions).
struct SegmentIntegrals {
  double aa, ab, bb, a, b;
};
SegmentIntegrals segment_integrals(const ElectrodeSegment& s);

// The grounded system matrix: Σ_e σ_e K_e (+ CEM terms with contact impedance z when segments is
// non-empty; electrode l's unknown is n_nodes + l), row/column ref_node zeroed, diagonal 1.
// Ungrounded (grounded = false) it is the plain Neumann system, singular by constants.
Eigen::SparseMatrix<double> assemble_system(const Mesh& mesh, const ElementGeometry& geometry,
                                            const Eigen::VectorXd& perm,
                                            const ElectrodeSegments& segments, double z,
                                            bool grounded);

}  // namespace eit::recon::detail
