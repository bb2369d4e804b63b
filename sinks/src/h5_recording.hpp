#pragma once
// H5Recording: what the image and raw-frame recorders share. It owns the growing H5FrameTable
// (h5_frame_table.hpp), writes the root attributes both layouts carry (format, version, model_id,
// algorithm, stream, frame_rate_hz, reference, source) and the /protocol group, and implements
// the ImageSink calls both recorders make the same way: append a frame's row with its per-frame
// columns, write a partial chunk every flush_interval_ns on tick(), close, report stats. The
// RecordingAnnexes added to it (the image recorder's indices) follow each of those calls. Private
// to eit_sinks.
//
// Life: construct (creates the file; throws std::runtime_error naming the file), add the layout's
// own metadata through root()/path() and the h5meta helpers and any annexes, start_swmr(), then
// append/tick on the one writer thread (the recorder's sink thread) and close(). append/tick/close
// never throw and never allocate; stats() from any thread.
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "eit/pipeline/frame.hpp"
#include "eit/pipeline/image_sink.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/hdf5_recorder_options.hpp"
#include "eit/sinks/recording_annex.hpp"

namespace eit::sinks::detail {

class H5FrameTable;

class H5Recording {
 public:
  // format: the root "format" attribute ("eitstream-images", "eitstream-frames"); data_name and
  // width: the growing float32 dataset (/images n_out wide, /frames n_meas wide).
  H5Recording(const std::filesystem::path& path, const std::string& format,
              const std::string& data_name, size_t width, const recon::Model& model,
              const Hdf5RecorderOptions& options);
  ~H5Recording();
  H5Recording(const H5Recording&) = delete;
  H5Recording& operator=(const H5Recording&) = delete;

  hid_t root() const noexcept;
  const std::string& path() const noexcept;
  // Creates the annex's objects in the file (throws, naming the file and object); from then on
  // append, tick, close and stats include it. Before start_swmr().
  void add_annex(std::unique_ptr<RecordingAnnex> annex);
  void start_swmr();  // after the layout's own metadata and the annexes; throws

  // One row (width floats) with the frame's seq, acquisition/publish stamps, flags and drops,
  // then each annex's append.
  void append(const float* row, const pipeline::FrameSlot& frame) noexcept;
  // Writes a partial chunk every flush_interval_ns and flushes the annexes with it.
  void tick(int64_t now_ns) noexcept;
  void close() noexcept;  // the annexes, then the file
  // Rows still in the chunk buffer count as sent: they are written at the next flush or close().
  // Errors include the annexes'.
  pipeline::SinkStats stats() const noexcept;
  pipeline::SinkPolicy policy() const noexcept { return policy_; }
  // "" while the file is written; after a failed write, why, and that recording stopped (the
  // annexes stop with it). Any thread.
  std::string failure() const;

 private:
  std::unique_ptr<H5FrameTable> table_;
  std::vector<std::unique_ptr<RecordingAnnex>> annexes_;
  int64_t flush_interval_ns_, last_flush_ns_ = 0;
  pipeline::SinkPolicy policy_;
};

}  // namespace eit::sinks::detail
