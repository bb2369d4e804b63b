#include "indices_options.hpp"

#include <cmath>
#include <filesystem>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "command_registry.hpp"
#include "option_checks.hpp"

namespace eit::cli {

namespace {

// One option of the table below: its name after the prefix, where it goes, its help text, and
// whether the help shows the default.
struct IndicesOption {
  const char* name;
  std::variant<double*, int*, size_t*, std::string*, std::vector<std::string>*> target;
  const char* help;
  bool show_default = true;
  std::optional<CLI::Validator> check = std::nullopt;
};

}  // namespace

void add_indices_options(CLI::App& cmd, IndicesCliOptions& o, const std::string& prefix) {
  const IndicesOption options[] = {
      {"sign", &o.sign, "Impedance = sign · image (eitstream images are conductivity change: −1)"},
      {"layers", &o.layers, "Ventral → dorsal layers"},
      {"ventral", &o.ventral, "Where ventral is: +y | -y"},
      {"right", &o.right, "Where the patient's right is: -x | +x"},
      {"roi", &o.rois,
       "ROI mask file (0/1 per image value, image order); repeatable; named by file stem", false},
      {"lung-roi", &o.lung_roi,
       "ROI (file stem) to use as lung region for silent spaces (default: lung space)", false},
      {"min-breath", &o.breath.minimum_duration_s, "Minimum breath duration (s)", true,
       within(0, indices::kMaxWindowS, true, false)},
      {"averaging-window", &o.breath.averaging_window_s,
       "Moving-average window of breath detection (s)", true,
       within(0, indices::kMaxWindowS, true, false)},
      {"amplitude-cutoff", &o.breath.amplitude_cutoff_fraction,
       "Drop breaths below this fraction of the median amplitude (0: keep all)", true,
       within(0, 1, false, true)},
      {"invalid-window", &o.breath.invalid_window_s,
       "Drop breaths within this many seconds of invalid data", true,
       within(0, indices::kMaxWindowS, false, false)},
      {"invalid-percentile", &o.breath.invalid_percentile, "Invalid-data guard: percentile n", true,
       within(0, 50, false, true)},
      {"invalid-multiplier", &o.breath.invalid_multiplier, "Invalid-data guard: multiplier m", true,
       within(0, 1e6, true, false)},
      {"max-breath", &o.breath.max_breath_s, "Longest breath analysed (s)", true,
       within(0, indices::kMaxBreathS, true, false)},
      {"lungspace", &o.per_breath.lungspace_fraction,
       "Lung space: mean tidal image ≥ this fraction of its maximum", true,
       within(0, 1, true, false)},
      {"silent", &o.per_breath.silent_fraction,
       "Silent spaces: tidal variation < this fraction of the breath's maximum", true,
       within(0, 1, false, false)},
      {"rvd-threshold", &o.per_breath.rvd_threshold,
       "RVD: fraction of each pixel's inspiratory rise", true, within(0, 1, true, true)},
      {"trend-breaths", &o.per_breath.trend_breaths, "EELI trend over this many breaths (≥ 2)",
       true, within(2, 1000, false, false)},
  };
  for (const IndicesOption& option : options)
    std::visit(
        [&](auto* target) {
          CLI::Option* added = cmd.add_option("--" + prefix + option.name, *target, option.help);
          if (option.show_default) added->capture_default_str();
          if (option.check) added->check(*option.check);
          added->group("Indices");
        },
        option.target);
}

indices::BodyLayout make_layout(
    const std::variant<recon::MeshGeometry, recon::GridGeometry>& geometry, size_t n_out,
    const IndicesCliOptions& o) {
  if (o.ventral != "+y" && o.ventral != "-y")
    throw CommandError(fmt::format("--ventral '{}': expected +y or -y", o.ventral));
  if (o.right != "-x" && o.right != "+x")
    throw CommandError(fmt::format("--right '{}': expected -x or +x", o.right));
  indices::LayoutOptions lo;
  lo.layers = o.layers;
  lo.ventral_positive_y = o.ventral == "+y";
  lo.right_negative_x = o.right == "-x";
  recon::Model shell;
  shell.geometry = geometry;
  shell.H.resize(static_cast<Eigen::Index>(n_out), 0);
  shell.id = "image file";
  indices::BodyLayout layout = indices::BodyLayout::from_model(shell, lo);
  for (const auto& f : o.rois)
    layout.add_roi(std::filesystem::path(f).stem().string(), indices::read_roi_mask(f, n_out));
  return layout;
}

indices::IndicesOptions make_engine_options(double rate_hz, const IndicesCliOptions& o) {
  if (o.sign != 1 && o.sign != -1)
    throw CommandError(fmt::format("--sign {}: expected 1 or -1", o.sign));
  indices::IndicesOptions io;
  io.rate_hz = rate_hz;
  io.sign = o.sign;
  io.breath = o.breath;
  io.per_breath = o.per_breath;
  io.history_s = o.history_s;
  if (!o.lung_roi.empty()) {
    io.per_breath.lung_roi = -1;
    for (size_t r = 0; r < o.rois.size(); ++r)
      if (std::filesystem::path(o.rois[r]).stem().string() == o.lung_roi)
        io.per_breath.lung_roi = static_cast<int>(r);
    if (io.per_breath.lung_roi < 0)
      throw CommandError(fmt::format("--lung-roi '{}': no --roi file has that name", o.lung_roi));
  }
  return io;
}

}  // namespace eit::cli
