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
  const Eigen::MatrixXd H = -A.ldlt().solve(J.transpose());
  m.H = H.cast<float>();
  m.algorithm = "jac";
  m.parameters_json =
      fmt::format(R"({{"method":"tikhonov","lambda_rel":0.01,"lambda":{}}})", lambda);
  recon::MeshGeometry g;
  g.nodes = mesh.nodes;
  g.elements = mesh.elements;
  g.electrode_nodes = mesh.electrode_nodes;
  g.output_on = recon::MeshGeometry::OutputOn::kElements;
  m.geometry = std::move(g);
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
