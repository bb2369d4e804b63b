#pragma once
// Tetrahedral meshes of an extruded body outline (a cylinder for the circle: a tank; the ellipse or
// polygon thorax outlines of model build × a height) with point electrodes in 1, 2 or 3 rings,
// made by Gmsh (geo kernel, Delaunay 3-D, one thread, fixed options: the same inputs give the same
// mesh) and refined near the electrodes (a Distance/Threshold size field: h_electrode within
// refine_radius of an electrode, growing linearly to h0 at 4 × refine_radius).
//
// Geometry: the outline at z = 0 extruded in layers whose interfaces are the ring heights, so each
// electrode (angle position s_k of outline.hpp on its ring, the same positions on every ring) is
// a geometric vertex and thus a mesh node with exact coordinates. Electrode numbering: ring by
// ring from the lowest, within a ring clockwise from 9 o'clock seen from +z (pyEIT's order);
// electrode e = ring · (N / rings) + k. Node order: electrode nodes first (node e = electrode e),
// then the others in Gmsh's order; ref_node = N (pyEIT's choice). Tetrahedra positively oriented
// (det[p1−p0, p2−p0, p3−p0] > 0). The result passes check_mesh and has no tetrahedron of quality
// below 0.01 (else std::runtime_error naming the element).
//
// Electrode patches (complete electrode model): electrode_shape kRectangle makes each electrode an
// exact rectangle of the side surface, electrode_width of arc length along the outline by
// electrode_height along z, centred on the electrode point (its edges are geometric curves: the
// outline gets vertices at s_k ± width/2 and the extrusion a layer interface at z_r ± height/2), a
// physical surface "electrodeK" in the saved .msh; the mesh is h_electrode within refine_radius
// + the rectangle's half-diagonal of its centre. kCircle makes a disc of diameter
// electrode_width: the nodes of the side-surface triangles whose centroid lies within width/2 of
// the electrode point (disc_patch, mesh_surface.hpp), the mesh h_electrode within width/2 +
// refine_radius of it (the disc's rim follows the mesh; its area approaches π width²/4 as
// h_electrode shrinks). Mesh::electrode_patches lists each patch's surface nodes
// (sorted); ForwardModel's CEM integrates over the surface triangles whose three nodes are in it.
//
// Mesher (mesher): kDelaunay (above) fills the volume with Gmsh's 3-D Delaunay and optimiser
// (isotropic tetrahedra, refined around each electrode point; ~10 s CPU for 220,000 tetrahedra).
// kExtruded meshes the cross-section at z = 0 in triangles (Gmsh 2-D, one thread; refined to
// h_electrode within refine_radius of the electrodes' outline positions, growing to h0 at
// 4 × refine_radius) and lets Gmsh extrude that mesh in layers (geo::extrude with layer counts,
// no recombination: Gmsh splits every prism into 3 tetrahedra conformingly). Layer thickness
// follows the same law in z about each ring height (plus half the rectangle's height), and the
// layer interfaces include every ring height and rectangle edge, so point electrodes are nodes
// and rectangles exact unions of side faces, as with Delaunay. Much faster (no 3-D Delaunay, no
// optimisation), deterministic, but anisotropic: the refinement is a cross (fine in the whole
// cross-section's electrode band and in the whole layer of each ring) rather than a ball, so it
// takes more tetrahedra for the same h_electrode, and it makes no circular patches
// (kCircle: std::invalid_argument).
//
// Threads: Gmsh calls are serialised by the process-wide session mutex (gmsh_session.hpp). Built
// without Gmsh, generate_mesh_3d throws std::runtime_error.
#include <filesystem>
#include <vector>

#include "eit/recon/mesh.hpp"
#include "eit/recon/outline.hpp"

namespace eit::recon {

struct Mesh3dOptions {
  Outline outline = CircleOutline{};
  double height = 1.0;            // extrusion along +z from z = 0
  int n_electrodes = 16;          // in all; divisible by n_rings
  int n_rings = 1;                // 1..3
  std::vector<double> ring_z;     // ring heights, ascending in (0, height); empty = equally spaced
  double h0 = 0.1;                // target edge length away from the electrodes
  double h_electrode = 0;         // edge length at the electrodes; 0 = h0 / 3
  double refine_radius = 0;       // full refinement within this distance; 0 = 2 · h_electrode
  enum class ElectrodeShape { kPoint, kCircle, kRectangle };
  ElectrodeShape electrode_shape = ElectrodeShape::kPoint;
  double electrode_width = 0;   // circle: diameter; rectangle: arc length along the outline
  double electrode_height = 0;  // rectangle: extent along z (= height: the full side)
  enum class Mesher { kDelaunay, kExtruded };
  Mesher mesher = Mesher::kDelaunay;
  std::filesystem::path save_msh;  // optionally write Gmsh's .msh (4.1, ASCII) too
};

// Throws std::invalid_argument for bad options (naming the option, value and range) and
// std::runtime_error when Gmsh fails or is not built in.
Mesh generate_mesh_3d(const Mesh3dOptions& options);

// The ring heights generate_mesh_3d uses (options.ring_z, or equally spaced).
std::vector<double> ring_heights(const Mesh3dOptions& options);

}  // namespace eit::recon
