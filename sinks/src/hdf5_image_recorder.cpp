#include "eit/sinks/hdf5_image_recorder.hpp"

#include "eit/recon/model_groups.hpp"
#include "h5_recording.hpp"

namespace eit::sinks {

Hdf5ImageRecorder::Hdf5ImageRecorder(const std::filesystem::path& path, const recon::Model& model,
                                     const Hdf5RecorderOptions& o,
                                     std::unique_ptr<RecordingAnnex> annex)
    : file_(std::make_unique<detail::H5Recording>(path, "eitstream-images", "images", model.n_out(),
                                                  model, o)) {
  recon::write_geometry(file_->root(), model, file_->path());
  if (annex) file_->add_annex(std::move(annex));
  file_->start_swmr();
}

Hdf5ImageRecorder::~Hdf5ImageRecorder() = default;

void Hdf5ImageRecorder::publish(const pipeline::FrameSlot& frame) noexcept {
  file_->append(frame.image, frame);
}

void Hdf5ImageRecorder::tick(int64_t now_ns) noexcept { file_->tick(now_ns); }
void Hdf5ImageRecorder::end() noexcept { file_->close(); }
pipeline::SinkStats Hdf5ImageRecorder::stats() const noexcept { return file_->stats(); }
std::string Hdf5ImageRecorder::failure() const { return file_->failure(); }
pipeline::SinkPolicy Hdf5ImageRecorder::policy() const noexcept { return file_->policy(); }

}  // namespace eit::sinks
