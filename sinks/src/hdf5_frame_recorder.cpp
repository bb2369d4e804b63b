#include "eit/sinks/hdf5_frame_recorder.hpp"

#include "eit/recon/hdf5_io.hpp"
#include "h5_recording.hpp"

namespace eit::sinks {

Hdf5FrameRecorder::Hdf5FrameRecorder(const std::filesystem::path& path, const recon::Model& model,
                                     const Hdf5RecorderOptions& o)
    : file_(std::make_unique<detail::H5Recording>(path, "eitstream-frames", "frames",
                                                  model.n_meas(), model, o)) {
  namespace h5 = recon::h5;
  const hid_t root = file_->root();
  const std::string& file = file_->path();
  h5::write_attr(root, "n_meas", static_cast<int64_t>(model.n_meas()), file);
  if (!o.reference_values.empty())
    h5::write_float64(root, "v_ref", o.reference_values.data(), {o.reference_values.size()}, file);
  file_->start_swmr();
}

Hdf5FrameRecorder::~Hdf5FrameRecorder() = default;

void Hdf5FrameRecorder::publish(const pipeline::FrameSlot& frame) noexcept {
  file_->append(frame.values, frame);
}

void Hdf5FrameRecorder::tick(int64_t now_ns) noexcept { file_->tick(now_ns); }
void Hdf5FrameRecorder::end() noexcept { file_->close(); }
pipeline::SinkStats Hdf5FrameRecorder::stats() const noexcept { return file_->stats(); }
std::string Hdf5FrameRecorder::failure() const { return file_->failure(); }
pipeline::SinkPolicy Hdf5FrameRecorder::policy() const noexcept { return file_->policy(); }

}  // namespace eit::sinks
