#include "model_assembly.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tile_runner.hpp"

namespace eit::recon::detail {

Model make_model(std::string algorithm, std::string parameters_json, const Eigen::MatrixXd& H,
                 Eigen::VectorXd v_ref, bool normalize, const Protocol& protocol,
                 std::variant<MeshGeometry, GridGeometry> geometry, int threads) {
  Model model;
  model.algorithm = std::move(algorithm);
  model.parameters_json = std::move(parameters_json);
  // Column-major double to row-major float is a transposing copy (~1 s at 200,000 × 928).
  constexpr Eigen::Index kRows = 2048;
  model.H.resize(H.rows(), H.cols());
  detail::run_tiles((H.rows() + kRows - 1) / kRows, threads, [&](Eigen::Index tile) {
    const Eigen::Index r0 = tile * kRows, count = std::min(kRows, H.rows() - r0);
    model.H.middleRows(r0, count) = (-H.middleRows(r0, count)).cast<float>();
  });
  model.v_ref = std::move(v_ref);
  model.normalize = normalize;
  model.protocol = protocol;
  model.geometry = std::move(geometry);
  return model;
}

Model make_model(std::string algorithm, std::string parameters_json, MatrixRowMajorF&& model_h,
                 Eigen::VectorXd v_ref, bool normalize, const Protocol& protocol,
                 std::variant<MeshGeometry, GridGeometry> geometry) {
  Model model = make_model(std::move(algorithm), std::move(parameters_json), Eigen::MatrixXd(),
                           std::move(v_ref), normalize, protocol, std::move(geometry));
  model.H = std::move(model_h);
  return model;
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  return fmt::format("{}", value);  // shortest round-trip representation
}

std::string forward_json(const ForwardOptions& o) {
  if (o.electrodes == ForwardOptions::Electrodes::kPoint)
    return R"("forward": {"electrodes": "point"})";
  return fmt::format(
      R"("forward": {{"electrodes": "complete", "contact_impedance": {}, "electrode_width": {}}})",
      json_number(o.contact_impedance), json_number(o.electrode_width));
}

}  // namespace eit::recon::detail
