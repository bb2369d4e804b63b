#include "default_setup.hpp"

#include <stdexcept>
#include <variant>

#include <fmt/format.h>
#include <Eigen/Cholesky>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/mesh_generator.hpp"
#include "eit/recon/model_file.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::cli {

namespace {

// The element containing (x, y), or −1 outside the mesh (barycentric test with a small margin).
int element_at(const recon::Mesh& mesh, double x, double y) {
  for (int e = 0; e < mesh.n_elems(); ++e) {
    const auto a = mesh.nodes.row(mesh.elements(e, 0)), b = mesh.nodes.row(mesh.elements(e, 1)),
               c = mesh.nodes.row(mesh.elements(e, 2));
    const double det = (b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]);
    const double l1 = ((x - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (y - a[1])) / det;
    const double l2 = ((b[0] - a[0]) * (y - a[1]) - (x - a[0]) * (b[1] - a[1])) / det;
    if (l1 >= -1e-12 && l2 >= -1e-12 && l1 + l2 <= 1 + 1e-12) return e;
  }
  return -1;
}

}  // namespace

recon::Mesh default_mesh(int n_electrodes) {
  recon::MeshOptions o;
  o.outline = recon::CircleOutline{1.0};
  o.n_electrodes = n_electrodes;
  o.h0 = 0.1;
  return recon::generate_mesh(o);
}

recon::Model default_model(const recon::Mesh& mesh) {
  recon::ProtocolOptions po;
  po.n_electrodes = mesh.n_electrodes();
  recon::Model m;
  m.protocol = recon::make_protocol(po);
  recon::ForwardModel forward(mesh, m.protocol);
  m.v_ref = forward.solve();
  // J = −∂v/∂σ (pyEIT's sign), so dσ ≈ −(JᵀJ + λI)⁻¹ Jᵀ dv: the streaming H carries the minus.
  const Eigen::MatrixXd J = forward.jacobian();
  Eigen::MatrixXd A = J.transpose() * J;
  const double lambda = 0.01 * A.diagonal().mean();
  A.diagonal().array() += lambda;
  const Eigen::MatrixXd H_elements = -A.ldlt().solve(J.transpose());
  // Shown on a 32×32 pixel grid (the shape of the GREIT default): each pixel takes the value of
  // the element under its centre; pixels outside the body are masked and stay 0.
  recon::GridGeometry grid;
  grid.nx = grid.ny = 32;
  grid.dx = grid.dy = 2.0 / 32;
  grid.x0 = grid.y0 = -1.0 + grid.dx / 2;
  grid.mask.assign(32 * 32, 1);
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(32 * 32, J.rows());
  for (int r = 0; r < grid.ny; ++r)
    for (int c = 0; c < grid.nx; ++c) {
      const int e = element_at(mesh, grid.x0 + c * grid.dx, grid.y0 + r * grid.dy);
      if (e < 0) continue;
      grid.mask[static_cast<size_t>(r * grid.nx + c)] = 0;
      H.row(r * grid.nx + c) = H_elements.row(e);
    }
  m.H = H.cast<float>();
  m.algorithm = "jac";
  m.parameters_json = fmt::format(
      R"({{"method":"tikhonov","lambda_rel":0.01,"lambda":{},"output":"32x32 grid, element under each pixel centre"}})",
      lambda);
  m.geometry = std::move(grid);
  m.id = recon::model_content_hash(m);
  return m;
}

recon::Mesh phantom_mesh_for(const recon::Model& model) {
  if (const auto* g = std::get_if<recon::MeshGeometry>(&model.geometry);
      g && static_cast<int>(g->electrode_nodes.size()) == model.protocol.n_electrodes) {
    recon::Mesh mesh;
    mesh.nodes = g->nodes;
    mesh.elements = g->elements;
    mesh.electrode_nodes = g->electrode_nodes;
    // pyEIT grounds the first node that is not an electrode.
    for (int i = 0; i < mesh.n_nodes(); ++i)
      if (std::find(mesh.electrode_nodes.begin(), mesh.electrode_nodes.end(), i) ==
          mesh.electrode_nodes.end()) {
        mesh.ref_node = i;
        break;
      }
    return mesh;
  }
  return default_mesh(model.protocol.n_electrodes);
}

}  // namespace eit::cli
