#pragma once
// `eitstream model build --algorithm gn`: the Gauss–Newton options of the build command and the
// step that writes a "gn" model (no H: the reconstructor iterates on every frame).
#include <limits>
#include <string>

#include <CLI/CLI.hpp>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/gn_options.hpp"
#include "eit/recon/model.hpp"

namespace eit::cli {

struct GnBuildArgs {
  static constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();
  // NaN / empty: not given; options() picks the mode's default (pyEIT's with --pyeit-compat).
  double lambda_decay = 0.1, lambda_min = kUnset, tolerance = 1e-4, start_value = kUnset;
  int iterations = 20, frame_iterations = 3;
  std::string start, start_file;
  bool pyeit_compat = false;
  bool complex = false;

  void add(CLI::App* build);
  // prior/p/lambda come from the build command's shared --prior/--p/--lambda (when given).
  recon::GnOptions options(const std::string& prior, const double* p, const double* lambda) const;
};

// Builds the model, prints its summary lines and saves it to `output`.
void build_gn_model(const recon::Mesh& mesh, const recon::Protocol& protocol,
                    const recon::ForwardOptions& forward, const recon::GnOptions& options,
                    const std::string& output);

}  // namespace eit::cli
