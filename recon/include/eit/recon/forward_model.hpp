#pragma once
// FEM forward model of EIT on a triangle (2-D) or tetrahedron (3-D) mesh: linear (P1) elements,
// unit drive currents, one dimension-generic assembly (fem_assembly.hpp).
//
// Point electrodes (default) are pyEIT's model exactly, in 2-D and 3-D: electrode = one boundary node, node
// `mesh.ref_node` grounded (its row and column of K zeroed, diagonal 1). The complete electrode
// model (CEM) adds one unknown per electrode (its voltage U_l) and a contact impedance z:
//   [K + B   C] [u]   [0]     B_ij = Σ_l 1/z ∫_{e_l} φ_i φ_j,  C_il = −1/z ∫_{e_l} φ_i,
//   [C^T     D] [U] = [I],    D_ll = |e_l| / z,
// grounded at the same node; ∫_{e_l} runs over boundary edges (2-D) or surface triangles (3-D),
// one assembly for both (fem_assembly.hpp, ContactFacet). 2-D patches come from
// mesh.electrode_patches (whole boundary edges between consecutive patch nodes) or, when the mesh
// has none, are derived: an arc of `electrode_width` centred on each electrode node (partial edges
// at the ends). 3-D patches are the surface triangles whose three nodes are all in
// mesh.electrode_patches[l] (the generator's rectangles or discs, a .msh file's electrode
// surfaces) or, when the mesh has none, disc_patch(electrode node, electrode_width / 2).
//
// The system is assembled sparse and factorised once per conductivity (Eigen SimplicialLDLT, AMD
// ordering; CHOLMOD's supernodal Cholesky for tetrahedra when built with it, see options.solver); one solve per electrode gives the unit-injection fields, from which every drive field,
// every measurement and the Jacobian (adjoint method, no dense inverse) follow. Results for the
// last conductivity are cached, so solve() then jacobian() at the same perm factorise once.
//
// Not thread-safe (the cache is mutable state; jacobian*() itself splits over options.threads
// threads); no I/O; allocates. Throws std::invalid_argument for
// a protocol that does not fit the mesh, a bad perm (size, non-positive, non-finite) or options.
#include <memory>

#include <Eigen/Core>

#include "eit/recon/mesh.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::recon {

struct ForwardOptions {
  enum class Electrodes { kPoint, kComplete };
  Electrodes electrodes = Electrodes::kPoint;
  double contact_impedance = 0.01;  // z (CEM), in Ω·length for unit sheet conductivity
  double electrode_width = 0.1;     // derived CEM patches: arc length (2-D), disc diameter (3-D)
  // Sparse factorisation: auto = CHOLMOD (supernodal) for tetrahedra when built with it, Eigen's
  // SimplicialLDLT otherwise; eigen/cholmod force one (cholmod throws when not built in).
  enum class Solver { kAuto, kEigen, kCholmod };
  Solver solver = Solver::kAuto;
  // CPU threads for the Jacobian (std::thread over tiles of elements; ≤ 0 = every core). Each
  // thread writes its own rows of Jᵀ: the result is bit-identical for every thread count.
  int threads = 0;
};

// True when this build has SuiteSparse CHOLMOD (ForwardOptions::Solver::kCholmod works).
bool cholmod_available() noexcept;

class ForwardModel {
 public:
  ForwardModel(const Mesh& mesh, const Protocol& protocol, ForwardOptions options = {});
  ~ForwardModel();
  ForwardModel(ForwardModel&&) noexcept;
  ForwardModel& operator=(ForwardModel&&) noexcept;

  // Measurements v (n_meas) in protocol order; empty perm = conductivity 1 in every element.
  Eigen::VectorXd solve(const Eigen::VectorXd& perm = {});

  // J (n_meas × n_elems) = −∂v/∂σ_e (pyEIT's sign); normalize divides row k by |v_k|.
  Eigen::MatrixXd jacobian(const Eigen::VectorXd& perm = {}, bool normalize = false);
  // Jᵀ (n_elems × n_meas), the layout the builders use (no transpose of a large matrix).
  Eigen::MatrixXd jacobian_transposed(const Eigen::VectorXd& perm = {}, bool normalize = false);

  // Node potentials, one column per drive (n_nodes × n_drives), ground at mesh.ref_node.
  Eigen::MatrixXd drive_potentials(const Eigen::VectorXd& perm = {});

  // Transfer impedances Z (n_el × n_el): voltage of electrode i for unit current into electrode
  // j (returning through the ground). Symmetric (reciprocity).
  Eigen::MatrixXd transfer_impedance(const Eigen::VectorXd& perm = {});

  // CEM only: current through the contact of each electrode for every drive (n_el × n_drives),
  // computed from the solved fields (Σ_l must be 0, source +1, sink −1).
  Eigen::MatrixXd electrode_currents(const Eigen::VectorXd& perm = {});

  // Voltages of every electrode for every drive (n_el × n_drives).
  Eigen::MatrixXd electrode_voltages(const Eigen::VectorXd& perm = {});

  const Mesh& mesh() const noexcept;
  const Protocol& protocol() const noexcept;
  const ForwardOptions& options() const noexcept;
  const Eigen::VectorXd& element_areas() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eit::recon
