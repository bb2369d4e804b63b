#pragma once
// Internal: turning a builder's double H (pyEIT sign) into the streaming Model, and the JSON
// fragments the builders record as parameters_json. Allocate; no state.
#include <string>

#include <Eigen/Core>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/model.hpp"

namespace eit::recon::detail {

// model.H = float(−H) row-major; everything else copied. model.id stays empty. The conversion
// runs over `threads` threads (≤ 0 = every core) by fixed row blocks: exact, so the same for
// every count.
Model make_model(std::string algorithm, std::string parameters_json, const Eigen::MatrixXd& H,
                 Eigen::VectorXd v_ref, bool normalize, const Protocol& protocol,
                 std::variant<MeshGeometry, GridGeometry> geometry, int threads = 1);

// The same around an H already in the streaming form (float(−H), row-major), moved in.
Model make_model(std::string algorithm, std::string parameters_json, MatrixRowMajorF&& model_h,
                 Eigen::VectorXd v_ref, bool normalize, const Protocol& protocol,
                 std::variant<MeshGeometry, GridGeometry> geometry);

// `"forward": {...}` describing the forward model's options (electrode model, z, width).
std::string forward_json(const ForwardOptions& options);

// A double written so that it reads back exactly.
std::string json_number(double value);

}  // namespace eit::recon::detail
