#include "eit/sinks/hdf5_image_recorder.hpp"

#include "h5_metadata.hpp"
#include "h5_recording.hpp"

namespace eit::sinks {

Hdf5ImageRecorder::Hdf5ImageRecorder(const std::filesystem::path& path, const recon::Model& model,
                                     const Hdf5RecorderOptions& o,
                                     std::unique_ptr<RecordingAnnex> annex)
    : file_(std::make_unique<detail::H5Recording>(path, "eitstream-images", "images", model.n_out(),
                                                  model, o)),
      annex_(std::move(annex)) {
  detail::h5meta::write_geometry(file_->root(), model, file_->path());
  if (annex_) annex_->create(file_->root(), file_->path());
  file_->start_swmr();
}

Hdf5ImageRecorder::~Hdf5ImageRecorder() = default;

void Hdf5ImageRecorder::publish(const pipeline::FrameSlot& frame) noexcept {
  file_->append(frame.image, frame);
  if (annex_) annex_->append(frame);
}

void Hdf5ImageRecorder::tick(int64_t now_ns) noexcept {
  if (file_->tick(now_ns) && annex_) annex_->flush();
}

void Hdf5ImageRecorder::end() noexcept {
  if (annex_) annex_->close();
  file_->close();
}

pipeline::SinkStats Hdf5ImageRecorder::stats() const noexcept {
  auto s = file_->stats();
  if (annex_) s.errors += annex_->errors();
  return s;
}

pipeline::SinkPolicy Hdf5ImageRecorder::policy() const noexcept { return file_->policy(); }

}  // namespace eit::sinks
