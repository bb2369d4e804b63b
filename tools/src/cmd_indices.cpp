// `eitstream indices`: the clinical indices of a recorded image sequence, offline, with the same
// IndicesEngine the live sink runs (so the breaths found are those a live run would publish).
// Input: an image file (.h5, docs/formats.md), or a recording reconstructed here with a model.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "command_registry.hpp"
#include "eit/indices/body_layout.hpp"
#include "eit/indices/breath_json.hpp"
#include "eit/indices/indices_engine.hpp"
#include "eit/recon/default_model.hpp"
#include "eit/recon/model_file.hpp"
#include "eit/recon/npy_header.hpp"
#include "eit/sinks/json_text.hpp"
#include "existing_output.hpp"
#include "indices_input.hpp"
#include "indices_options.hpp"
#include "recording_option_table.hpp"
#include "spectral_peak.hpp"

namespace eit::cli {
namespace {

struct IndicesArgs {
  std::string input, output, model, reference = "all", images_out;
  double fps = 0;
  bool force = false;
  IndicesCliOptions common;
  RecordingArgs recording;  // a recording input: how to read it (recording_option_table.hpp)
  bool model_given = false, reference_given = false;
};

// A JSON number, or null for a value JSON cannot hold (NaN, ±infinity).
std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

void write_npy(const std::string& path, const std::vector<float>& z, size_t n, size_t n_out,
               const indices::BodyLayout& layout) {
  const std::vector<uint64_t> shape =
      layout.nx() > 0 ? std::vector<uint64_t>{n, static_cast<uint64_t>(layout.ny()),
                                              static_cast<uint64_t>(layout.nx())}
                      : std::vector<uint64_t>{n, n_out};
  std::ofstream out(path, std::ios::binary);
  if (!out) throw CommandError(fmt::format("--images-out {}: cannot write", path));
  out << recon::npy_float32_header(shape);
  out.write(reinterpret_cast<const char*>(z.data()), static_cast<std::streamsize>(z.size() * 4));
  out.close();  // a full disk shows here, not in a file cut short with exit status 0
  if (!out)
    throw CommandError(
        fmt::format("--images-out {}: writing failed: {}", path, std::strerror(errno)));
}

int run_indices(const IndicesArgs& a) {
  // Before the reconstruction, which can take a while: no output replaced without --force.
  if (a.output != "-") {
    refuse_output_is_input(a.output, a.input, "-o " + a.output, "the input " + a.input);
    refuse_output_is_input(a.output, a.images_out, "-o " + a.output,
                           "--images-out " + a.images_out + " too");
    refuse_existing_output(a.output, a.force, "-o " + a.output);
  }
  refuse_output_is_input(a.images_out, a.input, "--images-out " + a.images_out,
                         "the input " + a.input);
  refuse_existing_output(a.images_out, a.force, "--images-out " + a.images_out);
  ImageSequence seq;
  if (is_image_file(a.input)) {
    // Images carry their own model and reference: the options for recordings do nothing here.
    if (a.model_given || a.reference_given)
      fmt::print(stderr,
                 "eitstream: warning: {} holds images: --model and --reference are for "
                 "recordings and are not used\n",
                 a.input);
    seq = read_image_file(a.input);
  } else {
    const recon::Model model =
        a.model.empty() ? recon::default_model() : recon::load_model(a.model);
    seq = reconstruct_recording(a.input, model, a.reference, to_recording_options(a.recording));
  }
  if (a.fps != 0) {
    if (!(a.fps > 0) || !std::isfinite(a.fps))
      throw CommandError(fmt::format("--fps {}: expected a frame rate > 0", a.fps));
    seq.rate_hz = a.fps;
  }
  if (!(seq.rate_hz > 0))
    throw CommandError(fmt::format("{}: frame rate unknown: give --fps", a.input));

  indices::BodyLayout layout = make_layout(seq.geometry, seq.n_out, a.common);
  indices::IndicesEngine engine(std::move(layout), make_engine_options(seq.rate_hz, a.common));
  const auto& lay = engine.layout();

  const bool csv = a.output.ends_with(".csv");
  std::string out;
  std::vector<char> buf(indices::breath_json_capacity(lay));
  std::vector<double> global;
  std::vector<uint32_t> global_invalid;
  std::vector<float> z;
  size_t breaths = 0;
  double rate_sum = 0;
  if (csv) out.append(buf.data(), indices::write_breath_csv_header(lay, buf));
  std::string breath_json;
  for (size_t i = 0; i <= seq.n_frames; ++i) {
    const indices::BreathIndices* b = nullptr;
    if (i < seq.n_frames) {
      const std::span<const float> img(&seq.images[i * seq.n_out], seq.n_out);
      const bool valid = (seq.flags[i] & 1u) == 0;
      b = engine.push(img, seq.seq[i], seq.t_ns[i], valid);
      global.push_back(engine.global());
      global_invalid.push_back(valid ? 0 : 1);
      if (!a.images_out.empty())
        for (float v : img) z.push_back(static_cast<float>(a.common.sign) * v);
    } else {
      b = engine.finish();
      if (b) --i;  // until the detector holds nothing more
    }
    if (!b) continue;
    ++breaths;
    rate_sum += b->rate_per_min;
    if (csv) {
      out.append(buf.data(), indices::write_breath_csv_row(*b, lay, buf));
    } else {
      if (!breath_json.empty()) breath_json += ",\n";
      breath_json.append(buf.data(), indices::write_breath_json(*b, lay, "offline", true, buf));
    }
  }
  const double peak = spectral_peak(global, global_invalid, seq.rate_hz);
  if (!csv) {
    out = fmt::format("{{\"input\":{},\"frame_rate_hz\":{},\"frames\":{},\"sign\":{},",
                      sinks::json_text(nlohmann::json(a.input)), seq.rate_hz, seq.n_frames,
                      a.common.sign);
    out += fmt::format("\"global_spectral_peak_hz\":{},\"regions\":[", json_number(peak));
    for (size_t r = 0; r < lay.region_names().size(); ++r)
      out += fmt::format("{}\"{}\"", r ? "," : "", lay.region_names()[r]);
    out += fmt::format("],\"geometry\":{{\"nx\":{},\"ny\":{},\"inside\":[", lay.nx(), lay.ny());
    for (size_t i = 0; i < lay.n_out(); ++i)
      out += fmt::format("{}{}", i ? "," : "", lay.inside(i) ? 1 : 0);
    out += "]},\"global\":[";
    for (size_t i = 0; i < global.size(); ++i)
      out += fmt::format("{}{}", i ? "," : "", json_number(global[i]));
    out += "],\"breaths\":[\n" + breath_json + "]}\n";
  }
  if (a.output.empty() || a.output == "-") {
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0)
      throw CommandError(
          fmt::format("writing to standard output failed: {}", std::strerror(errno)));
  } else {
    std::ofstream f(a.output, std::ios::binary);
    if (!f) throw CommandError(fmt::format("-o {}: cannot write", a.output));
    f << out;
    f.close();  // a full disk shows here, not in a file cut short with exit status 0
    if (!f)
      throw CommandError(fmt::format("-o {}: writing failed: {}", a.output, std::strerror(errno)));
  }
  if (!a.images_out.empty()) write_npy(a.images_out, z, seq.n_frames, seq.n_out, lay);
  fmt::print(stderr,
             "eitstream indices: {}\n  {} frames at {} Hz, {} breaths (mean rate {:.1f}/min), "
             "global spectral peak {:.3f} Hz ({:.1f}/min, searched {}–{} Hz); {} invalid samples, "
             "{} breaths dropped; {} frames missing from the input filled in\n",
             seq.description, seq.n_frames, seq.rate_hz, breaths,
             breaths ? rate_sum / static_cast<double>(breaths) : 0.0, peak, 60 * peak,
             kSpectralPeakMinHz, kSpectralPeakMaxHz, engine.detector().invalid_samples(),
             engine.detector().dropped_breaths(), engine.gap_frames());
  if (engine.unfilled_frames() > 0)
    fmt::print(stderr,
               "eitstream: warning: {} missing frames were beyond the {} s filled per gap; times "
               "after such a gap are early by them\n",
               engine.unfilled_frames(), indices::kMaxGapFillS);
  return 0;
}

void attach_indices(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "indices",
      "Clinical indices of recorded images: breaths, rate, TIV, EELI/EILI, centre of ventilation, "
      "GI, RVD, silent spaces, lung space (docs/indices.md)");
  auto a = std::make_shared<IndicesArgs>();
  cmd->add_option("input", a->input,
                  "Image file (.h5, eitstream-images) or a recording (reconstructed with --model)")
      ->required();
  cmd->add_option("-o,--output", a->output,
                  "Output file: NAME.csv for one CSV row per breath, any other name for JSON (the "
                  "breaths, the global signal and the image geometry); default or - : JSON on "
                  "standard output");
  auto* model = cmd->add_option("--model", a->model,
                                "Recording input: model file (default: the built-in model)");
  auto* reference = cmd->add_option("--reference", a->reference,
                                    "Recording input: all (mean of every frame) | first:N | model")
                        ->capture_default_str();
  cmd->add_option("--fps", a->fps, "Frame rate when the input does not give it (or to override)");
  cmd->add_option("--images-out", a->images_out,
                  "Also write the impedance images the indices were computed on (.npy float32, "
                  "[frames, ny, nx] for a grid)");
  cmd->add_flag("--force", a->force, "Replace existing -o / --images-out files");
  add_indices_options(*cmd, a->common);
  add_recording_options(cmd, a->recording, false);
  cmd->footer(std::string("Exit status: 0 success; 1 a wrong input, model or option value, or an "
                          "output that exists (without --force) or cannot be written; 2 a "
                          "command line that does not parse.") +
              kExitBySignal);
  cmd->callback([a, model, reference] {
    a->model_given = model->count() > 0;
    a->reference_given = reference->count() > 0;
    run_indices(*a);
  });
}

const RegisterCommand kIndices{45, attach_indices};

}  // namespace
}  // namespace eit::cli
