#pragma once
// Hdf5ImageRecorder: the lossless ImageSink that keeps every image in an HDF5 file (layout
// "eitstream-images", docs/formats.md): /images float32 [n_frames × n_out] with per-frame seq,
// acquisition and publish times, flags and dropped_before, the model's geometry and protocol and
// what produced them. Written in SWMR mode: h5py (swmr=True) can read it while it grows.
//
// Threads: construction (creates the file, writes the metadata; throws std::runtime_error naming
// the file) anywhere; begin/publish/tick/end on the publish-stage thread; stats() from any thread.
// publish() copies the image into a chunk buffer allocated at construction and writes to disk
// only when a chunk is full (tick() also writes a partial chunk every flush_interval_ns so SWMR
// readers keep up); it blocks for that write. Policy kBlock (a lossless run waits for the disk),
// or kDropNewest with drop_when_behind (a live run: the recorder's own queue drops, counted). The
// first failed write stops the recording (failure() says why; the file keeps every row before
// it, whole); it is counted in stats().errors, and its frames and all later ones in
// stats().dropped; it never throws. An existing file is refused unless replace_existing.
// end() writes the rest and closes the file. An optional RecordingAnnex (e.g. the clinical
// indices) writes its own objects into the same file, on the same thread, after each image.
#include <filesystem>
#include <memory>

#include "eit/pipeline/image_sink.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/hdf5_recorder_options.hpp"
#include "eit/sinks/recording_annex.hpp"

namespace eit::sinks {
namespace detail {
class H5Recording;
}

class Hdf5ImageRecorder final : public pipeline::ImageSink {
 public:
  Hdf5ImageRecorder(const std::filesystem::path& path, const recon::Model& model,
                    const Hdf5RecorderOptions& options,
                    std::unique_ptr<RecordingAnnex> annex = nullptr);
  ~Hdf5ImageRecorder() override;

  std::string_view name() const noexcept override { return "hdf5-images"; }
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
  std::unique_ptr<detail::H5Recording> file_;  // the table, metadata, annex, tick/stats
};

}  // namespace eit::sinks
