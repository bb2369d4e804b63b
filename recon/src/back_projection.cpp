#include "eit/recon/back_projection.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "model_assembly.hpp"

namespace eit::recon {

BpOptions::Weight parse_bp_weight(std::string_view text) {
  if (text == "none") return BpOptions::Weight::kNone;
  if (text == "simple") return BpOptions::Weight::kSimple;
  throw std::invalid_argument(fmt::format("bp weight '{}': expected none or simple", text));
}

ReconstructionMatrix build_bp(ForwardModel& forward, const BpOptions& o) {
  const Mesh& mesh = forward.mesh();
  const Protocol& protocol = forward.protocol();
  const Eigen::MatrixXd f = forward.drive_potentials(o.perm);    // n_nodes × n_drives
  const Eigen::MatrixXd u = forward.electrode_voltages(o.perm);  // n_el × n_drives
  const int n_nodes = mesh.n_nodes();

  // Row weights (per node): 1 or (1.01 r_max − |x_i|) / (1.01 r_max).
  Eigen::VectorXd weight = Eigen::VectorXd::Ones(n_nodes);
  if (o.weight == BpOptions::Weight::kSimple) {
    const Eigen::VectorXd radius = mesh.nodes.rowwise().norm();
    const double r = 1.01 * radius.maxCoeff();
    weight = (r - radius.array()) / r;
  }

  ReconstructionMatrix out;
  out.H.resize(n_nodes, static_cast<Eigen::Index>(protocol.n_meas()));
  for (size_t k = 0; k < protocol.n_meas(); ++k) {
    const Measurement& m = protocol.measurements[k];
    const double a = u(m.positive, m.drive), b = u(m.negative, m.drive);
    const double lo = std::min(a, b), hi = std::max(a, b);
    auto column = out.H.col(static_cast<Eigen::Index>(k));
    for (int i = 0; i < n_nodes; ++i) {
      const double fi = f(i, m.drive);
      column(i) = (lo < fi && fi <= hi) ? weight(i) : 0.0;
    }
  }

  const Eigen::VectorXd v_ref = forward.solve(o.perm);
  // pyEIT's BP normalises dv by sign(v0): fold that into the streaming matrix's columns.
  Eigen::MatrixXd h_stream = out.H;
  if (o.normalize)
    for (Eigen::Index k = 0; k < v_ref.size(); ++k)
      h_stream.col(k) *= v_ref(k) > 0 ? 1.0 : v_ref(k) < 0 ? -1.0 : 0.0;
  const std::string params = fmt::format(
      R"({{"weight": "{}", "normalize": {}, "normalize_by": "sign(v_ref), folded into H", {}}})",
      o.weight == BpOptions::Weight::kSimple ? "simple" : "none", o.normalize,
      detail::forward_json(forward.options()));
  MeshGeometry geometry{mesh.nodes, mesh.elements, mesh.electrode_nodes,
                        MeshGeometry::OutputOn::kNodes};
  out.model = detail::make_model("bp", params, h_stream, v_ref, /*normalize=*/false, protocol,
                                 std::move(geometry));
  return out;
}

}  // namespace eit::recon
