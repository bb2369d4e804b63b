#pragma once
// Hdf5FrameRecorder: the lossless ImageSink that keeps the measurements themselves (layout
// "eitstream-frames", docs/formats.md): /frames float32 [n × n_meas] in the model's measurement
// order with the same per-frame columns as the image file, the protocol, and /v_ref when the
// reference was known at start. `eitstream run --source frames.h5` replays such a file and
// `eitstream reconstruct` turns it into images again, with this or another model.
//
// Threads, blocking and errors as Hdf5ImageRecorder (hdf5_image_recorder.hpp).
#include <filesystem>
#include <memory>

#include "eit/pipeline/image_sink.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/hdf5_recorder_options.hpp"

namespace eit::sinks {
namespace detail {
class H5Recording;
}

class Hdf5FrameRecorder final : public pipeline::ImageSink {
 public:
  Hdf5FrameRecorder(const std::filesystem::path& path, const recon::Model& model,
                    const Hdf5RecorderOptions& options);
  ~Hdf5FrameRecorder() override;

  std::string_view name() const noexcept override { return "hdf5-frames"; }
  void publish(const pipeline::FrameSlot& frame) noexcept override;
  void tick(int64_t now_ns) noexcept override;
  void end() noexcept override;
  pipeline::SinkStats stats() const noexcept override;
  // "" while recording works; after the first failed write (a full disk, an I/O error), what
  // failed and why: the file then keeps the rows before it, whole, and nothing more is written
  // (every later frame counts as lost). Any thread.
  std::string failure() const;
  // kBlock, or kDropNewest with Hdf5RecorderOptions::drop_when_behind.
  pipeline::SinkPolicy policy() const noexcept override;

 private:
  std::unique_ptr<detail::H5Recording> file_;  // the table, common metadata, tick/stats
};

}  // namespace eit::sinks
