// Model, source and reference of `eitstream run` (run_inputs.hpp).
#include "run_inputs.hpp"

#include <fmt/format.h>

#include "backend_factory.hpp"
#include "default_setup.hpp"
#include "eit/acquisition/replay_source.hpp"
#include "eit/acquisition/stream_source.hpp"
#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/recon/default_model.hpp"
#include "eit/recon/model_file.hpp"
#include "phantom_source.hpp"
#include "run_sources.hpp"

namespace eit::cli {
namespace {

// The frame source: the synthetic phantom, a recording (a path) or a live device (a URI).
std::unique_ptr<pipeline::Source> open_source(const RunConfig& c, const recon::Model& model,
                                              const recon::Mesh* builtin_mesh) {
  if (is_phantom_source(c.source)) {
    const auto breathing = parse_breathing_source(c.source);  // nullopt: synthetic
    const double rate_hz = c.fps < 0 ? 50.0 : c.fps;
    const recon::Mesh mesh = builtin_mesh ? *builtin_mesh : phantom_mesh_for(model);
    if (breathing)
      return open_breathing_phantom(*breathing, rate_hz, c.snr_db, model.protocol, mesh);
    acquisition::PhantomOptions po;
    po.rate_hz = rate_hz;
    po.snr_db = c.snr_db;
    return std::make_unique<acquisition::SyntheticPhantomSource>(mesh, model.protocol, po);
  }
  if (c.source.find("://") != std::string::npos) return open_live(c.source, c.fps, model.protocol);
  acquisition::ReplayOptions o;
  o.recording = to_recording_options(c.recording);
  if (c.fps > 0) o.fps = c.fps;
  o.unpaced = c.fps == 0;
  o.loop = c.loop;
  o.speed = c.recording.speed;
  return open_replay_file(c.source, o, model.protocol);
}

}  // namespace

bool is_recording(const RunConfig& c) {
  return !is_phantom_source(c.source) && c.source.find("://") == std::string::npos;
}

RunInputs::RunInputs(const RunConfig& c) {
  // Model: a file, or the built-in one on the default mesh.
  if (!c.model.empty()) {
    model = recon::load_model(c.model);
  } else {
    model = recon::default_model();
    builtin_mesh = std::make_unique<recon::Mesh>(default_mesh(model.protocol.n_electrodes));
  }
  interleaved = is_recording(c) && to_recording_options(c.recording).complex_part ==
                                       acquisition::ComplexPart::kInterleaved;
  check_complex_frames(model, interleaved);
  source = open_source(c, model, builtin_mesh.get());
  const auto* phantom = dynamic_cast<const acquisition::SyntheticPhantomSource*>(source.get());
  const auto* replay = dynamic_cast<const acquisition::ReplaySource*>(source.get());
  if (replay) warnings = replay->warnings();
  for (const auto& w : warnings) fmt::print(stderr, "eitstream: warning: {}\n", w);
  ReferenceContext rc;
  std::vector<double> homogeneous;
  if (phantom) {
    const auto& h = phantom->table().homogeneous;
    homogeneous.assign(h.data(), h.data() + h.size());
    rc.phantom = &homogeneous;
  }
  if (is_recording(c)) {
    rc.recording = c.source;
    rc.recording_options = to_recording_options(c.recording);
    rc.loops = c.loop;
    if (replay) rc.recording_frames = replay->progress().frames_in_file;
  }
  reference = choose_reference(c.reference, model, rc);
  device_source = dynamic_cast<const acquisition::StreamSource*>(source.get()) != nullptr;
}

}  // namespace eit::cli
