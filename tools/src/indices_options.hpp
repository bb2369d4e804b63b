#pragma once
// The indices' command-line options, shared by `eitstream indices` and `eitstream run --indices`
// (there with the prefix "indices-"), and the set-up they drive.
#include <string>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "eit/indices/body_layout.hpp"
#include "eit/indices/indices_engine.hpp"
#include "eit/recon/model.hpp"

namespace eit::cli {

struct IndicesCliOptions {
  double sign = -1;  // impedance = sign · image
  int layers = 4;
  std::string ventral = "+y", right = "-x";
  std::vector<std::string> rois;  // mask files
  std::string lung_roi;           // ROI name (file stem) used as lung region for silent spaces
  indices::BreathDetectionOptions breath;
  indices::BreathIndexOptions per_breath;
  double history_s = 0;
};

void add_indices_options(CLI::App& cmd, IndicesCliOptions& o, const std::string& prefix = "");

// Throws CommandError naming the option for a bad value or ROI file.
indices::BodyLayout make_layout(
    const std::variant<recon::MeshGeometry, recon::GridGeometry>& geometry, size_t n_out,
    const IndicesCliOptions& o);
indices::IndicesOptions make_engine_options(double rate_hz, const IndicesCliOptions& o);

}  // namespace eit::cli
