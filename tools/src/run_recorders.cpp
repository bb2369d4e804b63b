// The HDF5 recorders of `eitstream run` (run_recorders.hpp).
#include "run_recorders.hpp"

#include <fmt/format.h>

#include "command_registry.hpp"
#include "run_inputs.hpp"
#include "source_fingerprint.hpp"

namespace eit::cli {

Recorders open_recorders(const RunConfig& c, const recon::Model& model,
                         const pipeline::Source& source, const ReferenceChoice& ref,
                         std::unique_ptr<sinks::RecordingAnnex> annex) {
  Recorders r;
  if (c.record.empty() && c.record_raw.empty()) return r;
  sinks::Hdf5RecorderOptions o;
  o.stream = c.stream;
  o.frame_rate_hz = source.nominal_rate_hz();
  o.reference = ref.description;
  o.source = is_recording(c) ? source_fingerprint(c.source) : c.source;
  o.chunk_frames = c.record_chunk;
  o.drop_when_behind = c.policy == "live";  // a slow disk never stalls the live path
  if (c.record_compress > 9)
    throw CommandError(fmt::format("--record-compress {}: expected 0 to 9", c.record_compress));
  if (!c.record.empty()) {
    o.deflate = static_cast<int>(c.record_compress);
    r.images = std::make_unique<sinks::Hdf5ImageRecorder>(c.record, model, o, std::move(annex));
  }
  if (!c.record_raw.empty()) {
    o.deflate = 0;
    if (ref.options.mode == pipeline::ReferenceMode::kGiven)
      o.reference_values = ref.options.values;
    if (ref.options.mode == pipeline::ReferenceMode::kModel)
      o.reference_values.assign(model.v_ref.data(), model.v_ref.data() + model.v_ref.size());
    r.frames = std::make_unique<sinks::Hdf5FrameRecorder>(c.record_raw, model, o);
  }
  return r;
}

std::string sink_line(const char* what, const std::string& path, const pipeline::SinkStats& s,
                      const pipeline::SinkQueueStats& q) {
  const uint64_t behind = q.queue.dropped;
  return fmt::format(
      "{} {}: {} frames written, {} lost, {} write errors{}{}\n", what, path, s.sent,
      s.dropped + behind, s.errors,
      behind ? fmt::format(" ({} dropped: the disk was slower than the live stream)", behind)
             : std::string(),
      s.errors || behind ? " — THE RECORDING IS INCOMPLETE" : "");
}

}  // namespace eit::cli
