#pragma once
// Internal: graph Laplacian of the element adjacency (triangles sharing an edge,
// tetrahedra sharing a face, are neighbours):
// L_ee = number of neighbours, L_ef = −1 for neighbours. Used by the Laplacian JAC prior R = LᵀL.
#include <Eigen/SparseCore>

#include "eit/recon/mesh.hpp"

namespace eit::recon::detail {

Eigen::SparseMatrix<double> element_laplacian(const Mesh& mesh);

}  // namespace eit::recon::detail
