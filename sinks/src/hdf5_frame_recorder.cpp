#include "eit/sinks/hdf5_frame_recorder.hpp"

#include "h5_frame_table.hpp"
#include "h5_metadata.hpp"

namespace eit::sinks {

Hdf5FrameRecorder::Hdf5FrameRecorder(const std::filesystem::path& path, const recon::Model& model,
                                     const Hdf5RecorderOptions& o)
    : table_(std::make_unique<detail::H5FrameTable>(path, "frames", model.n_meas(), o.chunk_frames,
                                                    o.deflate)),
      flush_interval_ns_(o.flush_interval_ns) {
  namespace m = detail::h5meta;
  const hid_t root = table_->root();
  const std::string& file = table_->path();
  m::attr(root, "format", std::string("eitstream-frames"), file);
  m::attr(root, "version", int64_t{1}, file);
  m::attr(root, "model_id", model.id, file);
  m::attr(root, "algorithm", model.algorithm, file);
  m::attr(root, "stream", o.stream, file);
  m::attr(root, "frame_rate_hz", o.frame_rate_hz, file);
  m::attr(root, "reference", o.reference, file);
  m::attr(root, "source", o.source, file);
  m::write_protocol(root, model.protocol, file);
  m::attr(root, "n_meas", static_cast<int64_t>(model.n_meas()), file);
  if (!o.reference_values.empty())
    m::dataset(root, "v_ref", o.reference_values.data(), {o.reference_values.size()}, file);
  table_->start_swmr();
}

Hdf5FrameRecorder::~Hdf5FrameRecorder() = default;

void Hdf5FrameRecorder::publish(const pipeline::FrameSlot& frame) noexcept {
  using pipeline::Stage;
  table_->append(frame.values, {frame.seq, frame.stamp(Stage::kReceived),
                                frame.stamp(Stage::kPublished), frame.flags, frame.dropped_before});
}

void Hdf5FrameRecorder::tick(int64_t now_ns) noexcept {
  if (now_ns - last_flush_ns_ < flush_interval_ns_) return;
  last_flush_ns_ = now_ns;
  table_->flush();
}

void Hdf5FrameRecorder::end() noexcept { table_->close(); }

pipeline::SinkStats Hdf5FrameRecorder::stats() const noexcept {
  // Rows still in the chunk buffer count as sent: they are written at the next flush or end().
  return {table_->rows_accepted(), table_->rows_lost(), table_->write_errors()};
}

}  // namespace eit::sinks
