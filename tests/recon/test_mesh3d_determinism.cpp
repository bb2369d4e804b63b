// generate_mesh_3d gives the same mesh, bit for bit, whatever the process did before: Gmsh 4.8's
// HXT volume mesher (Mesh.Algorithm3D = 10, 4× faster than Delaunay here) orders its input by
// the addresses of Gmsh's vertex objects, so its meshes changed with the heap's history (even with
// the length of `model build -o`'s path); this case fails for such a mesher.
#include <doctest/doctest.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "eit/recon/mesh_generator_3d.hpp"
#include "gmsh_skip.hpp"

using namespace eit::recon;

namespace {

Mesh two_ring_cylinder() {
  Mesh3dOptions o;
  o.n_electrodes = 32;
  o.n_rings = 2;
  o.h0 = 0.25;
  return generate_mesh_3d(o);
}

}  // namespace

TEST_CASE("3-D cylinder mesh: identical after the heap was fragmented in between") {
  if (eit::test::skip_without_gmsh("3-D mesh determinism")) return;
  const Mesh a = two_ring_cylinder();
  // Blocks of many small sizes (those of Gmsh's vertex and element objects among them), every
  // other one freed: the next mesh's objects land in these holes, in another address order.
  std::vector<std::unique_ptr<char[]>> blocks;
  for (std::size_t i = 0; i < 40000; ++i) blocks.emplace_back(new char[16 + (i * 37) % 240]);
  for (std::size_t i = 0; i < blocks.size(); i += 2) blocks[i].reset();
  const Mesh b = two_ring_cylinder();
  MESSAGE(a.n_nodes() << " nodes, " << a.n_elems() << " tetrahedra; again: " << b.n_nodes()
                      << ", " << b.n_elems());
  REQUIRE(a.nodes.rows() == b.nodes.rows());  // (Eigen's == needs equal sizes)
  REQUIRE(a.elements.rows() == b.elements.rows());
  CHECK(a.nodes == b.nodes);
  CHECK(a.elements == b.elements);
}
