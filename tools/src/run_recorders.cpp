// The HDF5 recorders of `eitstream run` (run_recorders.hpp).
#include "run_recorders.hpp"

#include <filesystem>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "command_registry.hpp"
#include "existing_output.hpp"
#include "run_inputs.hpp"
#include "source_fingerprint.hpp"

namespace eit::cli {
namespace {

namespace fs = std::filesystem;

// Before any file is created: an existing file is refused without --force, and the two
// recorders never share a file (the second would truncate the first, then fail).
void check_record_paths(const RunConfig& c) {
  for (const auto& [option, path] :
       {std::pair{"--record", &c.record}, {"--record-raw", &c.record_raw}}) {
    refuse_existing_output(*path, c.force, fmt::format("{} {}", option, *path));
  }
  for (const auto& [option, path] :
       {std::pair{"--record", &c.record}, {"--record-raw", &c.record_raw}}) {
    const std::string label = fmt::format("{} {}", option, *path);
    if (is_recording(c)) refuse_output_is_input(*path, c.source, label, "the --source file");
    refuse_output_is_input(*path, c.model, label, "the --model file");
  }
  std::error_code ec1, ec2;
  if (!c.record.empty() && !c.record_raw.empty() &&
      fs::weakly_canonical(c.record, ec1) == fs::weakly_canonical(c.record_raw, ec2))
    throw CommandError(fmt::format(
        "--record and --record-raw name the same file ({}): give each its own", c.record));
}

}  // namespace

Recorders open_recorders(const RunConfig& c, const recon::Model& model,
                         const pipeline::Source& source, const ReferenceChoice& ref,
                         std::unique_ptr<sinks::RecordingAnnex> annex) {
  Recorders r;
  if (c.record.empty() && c.record_raw.empty()) return r;
  sinks::Hdf5RecorderOptions o;
  o.stream = c.stream;
  // The frames' own rate, not the replay's pace: a file replayed at --speed 4 still holds 13 Hz
  // breathing, and `eitstream indices` times breaths by it.
  o.frame_rate_hz = source.recorded_rate_hz();
  o.reference = ref.description;
  o.source = is_recording(c) ? source_fingerprint(c.source) : c.source;
  o.chunk_frames = c.record_chunk;
  o.drop_when_behind = c.policy == "live";  // a slow disk never stalls the live path
  o.replace_existing = c.force;
  check_record_paths(c);
  if (c.record_compress > 9)
    throw CommandError(fmt::format("--record-compress {}: expected 0 to 9", c.record_compress));
  if (!c.record.empty()) {
    o.deflate = static_cast<int>(c.record_compress);
    r.images = std::make_unique<sinks::Hdf5ImageRecorder>(c.record, model, o, std::move(annex));
  }
  if (!c.record_raw.empty()) {
    o.deflate = 0;
    // A gn model's "none" is zeros given to the pipeline, not a reference of the frames: stored
    // as /v_ref, a later difference reconstruction of the file would take it for one.
    if (ref.options.mode == pipeline::ReferenceMode::kGiven && ref.spec != "none")
      o.reference_values = ref.options.values;
    if (ref.options.mode == pipeline::ReferenceMode::kModel)
      o.reference_values.assign(model.v_ref.data(), model.v_ref.data() + model.v_ref.size());
    try {
      r.frames = std::make_unique<sinks::Hdf5FrameRecorder>(c.record_raw, model, o);
    } catch (...) {
      // The image file this run just created holds nothing: left behind, it would make the
      // retry with a corrected --record-raw ask for --force.
      if (r.images) {
        r.images.reset();
        std::error_code ec;
        fs::remove(c.record, ec);
      }
      throw;
    }
  }
  return r;
}

std::string sink_line(const char* what, const std::string& path, const pipeline::SinkStats& s,
                      const pipeline::SinkQueueStats& q, const std::string& failure) {
  const uint64_t behind = q.queue.dropped;
  return fmt::format(
      "{} {}: {} frames written, {} lost, {} write errors{}{}{}\n", what, path, s.sent,
      s.dropped + behind, s.errors,
      behind ? fmt::format(" ({} dropped: the disk was slower than the live stream)", behind)
             : std::string(),
      failure.empty() ? "" : fmt::format("; recording stopped: {}", failure),
      s.errors || behind ? " — THE RECORDING IS INCOMPLETE" : "");
}

std::string recording_failure(const Recorders& r) {
  std::string out;
  const auto add = [&](const char* option, const std::string& failure) {
    if (!failure.empty()) out += fmt::format("{}{} {}", out.empty() ? "" : "; ", option, failure);
  };
  if (r.images) add("--record", r.images->failure());
  if (r.frames) add("--record-raw", r.frames->failure());
  return out;
}

}  // namespace eit::cli
