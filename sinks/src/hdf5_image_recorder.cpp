#include "eit/sinks/hdf5_image_recorder.hpp"

#include "h5_frame_table.hpp"
#include "h5_metadata.hpp"

namespace eit::sinks {

Hdf5ImageRecorder::Hdf5ImageRecorder(const std::filesystem::path& path, const recon::Model& model,
                                     const Hdf5RecorderOptions& o,
                                     std::unique_ptr<RecordingAnnex> annex)
    : table_(std::make_unique<detail::H5FrameTable>(path, "images", model.n_out(), o.chunk_frames,
                                                    o.deflate)),
      annex_(std::move(annex)),
      flush_interval_ns_(o.flush_interval_ns) {
  namespace m = detail::h5meta;
  const hid_t root = table_->root();
  const std::string& file = table_->path();
  m::attr(root, "format", std::string("eitstream-images"), file);
  m::attr(root, "version", int64_t{1}, file);
  m::attr(root, "model_id", model.id, file);
  m::attr(root, "algorithm", model.algorithm, file);
  m::attr(root, "stream", o.stream, file);
  m::attr(root, "frame_rate_hz", o.frame_rate_hz, file);
  m::attr(root, "reference", o.reference, file);
  m::attr(root, "source", o.source, file);
  m::write_protocol(root, model.protocol, file);
  m::write_geometry(root, model, file);
  if (annex_) annex_->create(root, file);
  table_->start_swmr();
}

Hdf5ImageRecorder::~Hdf5ImageRecorder() = default;

void Hdf5ImageRecorder::publish(const pipeline::FrameSlot& frame) noexcept {
  using pipeline::Stage;
  table_->append(frame.image, {frame.seq, frame.stamp(Stage::kReceived),
                               frame.stamp(Stage::kPublished), frame.flags, frame.dropped_before});
  if (annex_) annex_->append(frame);
}

void Hdf5ImageRecorder::tick(int64_t now_ns) noexcept {
  if (now_ns - last_flush_ns_ < flush_interval_ns_) return;
  last_flush_ns_ = now_ns;
  table_->flush();
  if (annex_) annex_->flush();
}

void Hdf5ImageRecorder::end() noexcept {
  if (annex_) annex_->close();
  table_->close();
}

pipeline::SinkStats Hdf5ImageRecorder::stats() const noexcept {
  // Rows still in the chunk buffer count as sent: they are written at the next flush or end().
  return {table_->rows_accepted(), table_->rows_lost(),
          table_->write_errors() + (annex_ ? annex_->errors() : 0)};
}

}  // namespace eit::sinks
