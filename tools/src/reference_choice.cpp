#include "reference_choice.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "command_registry.hpp"

namespace eit::cli {
namespace {

constexpr size_t kDefaultFirst = 10;

size_t parse_index(const std::string& text, const std::string& spec) {
  size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || text.starts_with('-'))
    throw CommandError(fmt::format("--reference '{}': '{}' is not a frame number", spec, text));
  return static_cast<size_t>(v);
}

std::unique_ptr<acquisition::RecordingReader> open_reader(const std::string& path,
                                                          acquisition::RecordingOptions o,
                                                          const recon::Model& model,
                                                          const std::string& spec) {
  if (path.empty())
    throw CommandError(fmt::format(
        "--reference {}: needs a recording (the source is live or synthetic); use model, "
        "phantom, first:N or file:PATH",
        spec));
  return acquisition::open_recording_reader(path, o, model.protocol);
}

}  // namespace

FrameMean mean_of_frames(acquisition::RecordingReader& reader, size_t first, size_t last) {
  const size_t n = reader.n_values();
  FrameMean m;
  m.values.assign(n, 0.0);
  std::vector<float> v(n);
  m.last = std::min(last, reader.info().n_frames > 0 ? reader.info().n_frames - 1 : 0);
  for (size_t i = first; i <= m.last && i < reader.info().n_frames; ++i) {
    if (!reader.read(i, v) ||
        !std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); })) {
      ++m.skipped;
      continue;
    }
    for (size_t k = 0; k < n; ++k) m.values[k] += v[k];
    ++m.used;
  }
  if (m.used == 0)
    throw CommandError(fmt::format("{}: no readable finite frame among frames {}–{} ({} in file)",
                                   reader.info().path.filename().string(), first, last,
                                   reader.info().n_frames));
  for (double& s : m.values) s /= static_cast<double>(m.used);
  return m;
}

std::string FrameMean::describe(size_t first) const {
  const std::string range = first == last ? fmt::format("frame {}", first)
                                          : fmt::format("mean of frames {}–{}", first, last);
  return skipped == 0 ? range
                      : fmt::format("{} ({} unreadable or non-finite left out)", range, skipped);
}

ReferenceChoice absolute_imaging_reference(size_t n_values, const std::string& given) {
  if (!given.empty())
    fmt::print(stderr,
               "eitstream: warning: --reference {} ignored: a gn model images absolute "
               "conductivity from each frame alone\n",
               given);
  ReferenceChoice c;
  c.spec = "none";
  c.options.mode = pipeline::ReferenceMode::kGiven;
  c.options.values.assign(n_values, 0.0);
  c.description = "none (a gn model images absolute conductivity and uses no reference frame)";
  return c;
}

ReferenceChoice choose_reference(const std::string& spec_in, const recon::Model& model,
                                 const ReferenceContext& ctx) {
  ReferenceChoice c;
  std::string spec = spec_in;
  if (spec.empty()) {
    if (ctx.phantom) {
      spec = "phantom";
    } else if (!ctx.recording.empty()) {
      auto reader = open_reader(ctx.recording, ctx.recording_options, model, "");
      spec = reader->info().reference_variable.empty()
                 ? fmt::format("first:{}", std::min(kDefaultFirst, reader->info().n_frames))
                 : "variable:" + reader->info().reference_variable;
    } else {
      spec = fmt::format("first:{}", kDefaultFirst);
    }
  }
  c.spec = spec;
  auto& r = c.options;
  const auto given = [&](std::vector<double> values, std::string what) {
    r.mode = pipeline::ReferenceMode::kGiven;
    r.values = std::move(values);
    c.description = fmt::format("{} ({})", spec, what);
  };
  if (spec == "model") {
    if (model.v_ref.size() == 0)
      throw CommandError(
          fmt::format("--reference model: model {} has no v_ref; use first:N", model.id));
    r.mode = pipeline::ReferenceMode::kModel;
    c.description = fmt::format("model (the v_ref of model {}, {})", model.id,
                                model.algorithm == "imported" ? "imported" : "simulated");
  } else if (spec == "phantom") {
    if (!ctx.phantom)
      throw CommandError(
          "--reference phantom: only for the synthetic phantom of `run` (--source synthetic or "
          "phantom:…)");
    given(*ctx.phantom, "the synthetic phantom's homogeneous frame");
  } else if (spec.starts_with("first:")) {
    const size_t n = parse_index(spec.substr(6), spec);
    if (n == 0) throw CommandError(fmt::format("--reference '{}': expected N ≥ 1", spec));
    if (ctx.capture_first || ctx.recording.empty()) {
      // A capture the user asked for that takes every frame of a recording played once leaves
      // none to image. (The default, first:10 or fewer, may take a short file whole: the end
      // warns then; a gn model uses no reference.) The count is the open replay's: a stream
      // decoder's file, which has none, is not opened again as a recording (it is not one).
      if (!spec_in.empty() && !model.gn && !ctx.recording.empty() && !ctx.loops) {
        const uint64_t frames = ctx.recording_frames;
        if (frames > 0 && n >= frames)
          throw CommandError(fmt::format(
              "--reference '{}': {} has {} frames, so a capture of {} would take them all and "
              "no image would be made; expected first:N with N < {} (or --loop)",
              spec, ctx.recording, frames, n, frames));
      }
      r.mode = pipeline::ReferenceMode::kCapture;
      r.capture_frames = n;
      c.description = fmt::format("{} (mean of the first {} frames of the stream)", spec, n);
    } else {
      auto reader = open_reader(ctx.recording, ctx.recording_options, model, spec);
      FrameMean m = mean_of_frames(*reader, 0, n - 1);
      given(std::move(m.values), m.describe(0));
    }
  } else if (spec.starts_with("mean:")) {
    const std::string range = spec.substr(5);
    const auto dash = range.find('-');
    if (dash == std::string::npos)
      throw CommandError(fmt::format("--reference '{}': expected mean:A-B", spec));
    const size_t a = parse_index(range.substr(0, dash), spec);
    const size_t b = parse_index(range.substr(dash + 1), spec);
    if (b < a) throw CommandError(fmt::format("--reference '{}': B < A", spec));
    auto reader = open_reader(ctx.recording, ctx.recording_options, model, spec);
    if (a >= reader->info().n_frames)
      throw CommandError(fmt::format("--reference '{}': the recording has {} frames", spec,
                                     reader->info().n_frames));
    FrameMean m = mean_of_frames(*reader, a, b);
    given(std::move(m.values), m.describe(a));
  } else if (spec.starts_with("frame:")) {
    const size_t k = parse_index(spec.substr(6), spec);
    auto reader = open_reader(ctx.recording, ctx.recording_options, model, spec);
    if (k >= reader->info().n_frames)
      throw CommandError(fmt::format("--reference '{}': the recording has {} frames", spec,
                                     reader->info().n_frames));
    FrameMean m = mean_of_frames(*reader, k, k);
    given(std::move(m.values), m.describe(k));
  } else if (spec.starts_with("variable:")) {
    auto o = ctx.recording_options;
    o.variable = spec.substr(9);
    auto reader = open_reader(ctx.recording, o, model, spec);
    const size_t n = reader->info().n_frames;
    given(mean_of_frames(*reader, 0, n - 1).values,
          n == 1 ? fmt::format("stored in {}", reader->info().path.filename().string())
                 : fmt::format("mean of its {} frames in {}", n,
                               reader->info().path.filename().string()));
  } else if (spec.starts_with("file:")) {
    const std::string path = spec.substr(5);
    auto reader = acquisition::open_recording_reader(path, ctx.recording_options, model.protocol);
    const size_t n = reader->info().n_frames;
    given(mean_of_frames(*reader, 0, n - 1).values,
          fmt::format("mean of the {} frames of {}", n, path));
  } else {
    throw CommandError(fmt::format(
        "--reference '{}': expected model, phantom, first:N, mean:A-B, frame:K, variable:NAME or "
        "file:PATH",
        spec));
  }
  return c;
}

}  // namespace eit::cli
