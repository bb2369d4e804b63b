#pragma once
// Internal FEM building blocks shared by ForwardModel and the builders: P1 element geometry of
// triangles and tetrahedra (one code path, dimension d = 2 or 3), stiffness assembly and the
// complete-electrode boundary terms. Allocate; no state.
#include <array>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "eit/recon/mesh.hpp"

namespace eit::recon::detail {

// Per element, scaled gradients g_i = c_e ∇φ_i of the d + 1 hat functions and a weight w_e so that
// the unit-conductivity local stiffness is K_e,ij = |T_e| ∇φ_i·∇φ_j = w_e g_i·g_j:
//   triangle (a, b, c): g_i = edge opposite node i (s0 = c − b, s1 = a − c, s2 = b − a; a rotation
//     of 2A ∇φ_i, dot products are unchanged), w = 1/(4A) — pyEIT's s sᵀ/(4A);
//   tetrahedron: g_i = 6V ∇φ_i (a face normal, twice the face area), w = 1/(36|V|) — pyEIT's
//     a aᵀ/(36V); either orientation (pyEIT's tetrahedra have det[p1−p0, p2−p0, p3−p0] < 0).
struct ElementGeometry {
  int dim = 2;
  std::vector<Eigen::MatrixXd> grad;  // dim matrices n_elems × (dim + 1): component c of g_i
  Eigen::VectorXd measure;            // n_elems: signed area (2-D) or volume |V| (3-D)
  Eigen::VectorXd weight;             // n_elems: w_e
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

// The complete electrode model's boundary terms in any dimension: a contact facet is the part of
// one boundary simplex (a stretch of edge in 2-D, a surface triangle in 3-D) under an electrode,
// with the integrals of its hat functions over it: mass_ij = ∫ φ_i φ_j, load_i = ∫ φ_i,
// measure = ∫ 1. The CEM blocks (forward_model.hpp) are sums of these divided by z; the same code
// assembles them and computes the contact currents in 2-D and 3-D.
struct ContactFacet {
  int count = 0;                          // nodes used: 2 (edge) or 3 (triangle)
  std::array<int, 3> node{-1, -1, -1};
  std::array<double, 9> mass{};           // row-major count × count in the top-left
  std::array<double, 3> load{};
  double measure = 0;
};
using ElectrodeContacts = std::vector<std::vector<ContactFacet>>;  // per electrode

// 2-D: the electrode_segments() (partial edges exactly integrated). 3-D: the surface triangles
// whose three nodes all lie in the electrode's patch, mesh.electrode_patches[l], or when the mesh
// has no patches, in disc_patch(electrode node, width / 2) (mesh_surface.hpp: the triangles whose
// centroid is within width/2): mass = A/12 (1 + δ_ij), load = A/3, measure = A. Throws std::invalid_argument naming the
// electrode when its patch covers no facet.
ElectrodeContacts electrode_contacts(const Mesh& mesh, double width);
ElectrodeContacts contacts_from_segments(const ElectrodeSegments& segments);

// Σ over the electrode's facets of measure (its area or length |e_l|).
double contact_measure(const std::vector<ContactFacet>& facets);

// The grounded system matrix: Σ_e σ_e K_e (+ CEM terms with contact impedance z when contacts
// (segments) is non-empty; electrode l's unknown is n_nodes + l), row/column ref_node zeroed,
// diagonal 1. Ungrounded (grounded = false) it is the plain Neumann system, singular by constants.
Eigen::SparseMatrix<double> assemble_system(const Mesh& mesh, const ElementGeometry& geometry,
                                            const Eigen::VectorXd& perm,
                                            const ElectrodeContacts& contacts, double z,
                                            bool grounded);
Eigen::SparseMatrix<double> assemble_system(const Mesh& mesh, const ElementGeometry& geometry,
                                            const Eigen::VectorXd& perm,
                                            const ElectrodeSegments& segments, double z,
                                            bool grounded);

}  // namespace eit::recon::detail
