#include "h5_recording.hpp"

#include "eit/recon/hdf5_io.hpp"
#include "eit/recon/model_groups.hpp"
#include "h5_frame_table.hpp"

namespace eit::sinks::detail {

H5Recording::H5Recording(const std::filesystem::path& path, const std::string& format,
                         const std::string& data_name, size_t width, const recon::Model& model,
                         const Hdf5RecorderOptions& o)
    : table_(std::make_unique<H5FrameTable>(path, data_name, width, o.chunk_frames, o.deflate,
                                            o.replace_existing)),
      flush_interval_ns_(o.flush_interval_ns),
      policy_(o.drop_when_behind ? pipeline::SinkPolicy::kDropNewest
                                 : pipeline::SinkPolicy::kBlock) {
  table_->set_before_write(o.before_write);
  table_->set_flush_each_chunk(o.flush_each_chunk);
  table_->set_min_free(o.min_free_bytes, o.free_bytes);
  namespace h5 = recon::h5;
  const hid_t r = table_->root();
  const std::string& file = table_->path();
  h5::write_attr(r, "format", format, file);
  h5::write_attr(r, "version", int64_t{1}, file);
  h5::write_attr(r, "model_id", model.id, file);
  h5::write_attr(r, "algorithm", model.algorithm, file);
  // Only complex gn models: rows are (re, im) pairs (images: Re σ, Im σ per element; frames:
  // re, im per measurement). Absent means real, so real files are unchanged.
  if (model.complex_interleaved()) h5::write_attr(r, "complex", std::string("interleaved"), file);
  h5::write_attr(r, "stream", o.stream, file);
  h5::write_attr(r, "frame_rate_hz", o.frame_rate_hz, file);
  h5::write_attr(r, "reference", o.reference, file);
  h5::write_attr(r, "source", o.source, file);
  recon::write_protocol(r, model.protocol, file);
}

H5Recording::~H5Recording() = default;

hid_t H5Recording::root() const noexcept { return table_->root(); }
const std::string& H5Recording::path() const noexcept { return table_->path(); }
void H5Recording::start_swmr() { table_->start_swmr(); }

void H5Recording::add_annex(std::unique_ptr<RecordingAnnex> annex) {
  annex->create(table_->root(), table_->path());
  annexes_.push_back(std::move(annex));
}

void H5Recording::append(const float* row, const pipeline::FrameSlot& frame) noexcept {
  using pipeline::Stage;
  table_->append(row, {frame.seq, frame.stamp(Stage::kReceived), frame.stamp(Stage::kPublished),
                       frame.flags, frame.dropped_before});
  if (table_->stopped()) return;  // the file failed: the annexes write to it too
  for (const auto& a : annexes_) a->append(frame);
}

void H5Recording::tick(int64_t now_ns) noexcept {
  if (now_ns - last_flush_ns_ < flush_interval_ns_) return;
  last_flush_ns_ = now_ns;
  table_->flush();
  if (table_->stopped()) return;
  for (const auto& a : annexes_) a->flush();
}

void H5Recording::close() noexcept {
  for (const auto& a : annexes_) a->close();
  table_->close();
}

std::string H5Recording::failure() const { return table_->failure(); }

pipeline::SinkStats H5Recording::stats() const noexcept {
  uint64_t errors = table_->write_errors();
  for (const auto& a : annexes_) errors += a->errors();
  return {table_->rows_accepted(), table_->rows_lost(), errors};
}

}  // namespace eit::sinks::detail
