#pragma once
// `eitstream run --record FILE` and `--record-raw FILE`: the HDF5 recorders beside the
// publisher, and their line in the final summary. Set-up only (opens the files; throws
// CommandError or std::runtime_error naming the option or the file).
#include <memory>
#include <string>

#include "eit/pipeline/image_sink.hpp"
#include "eit/pipeline/pipeline_stats.hpp"
#include "eit/pipeline/source.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/hdf5_frame_recorder.hpp"
#include "eit/sinks/hdf5_image_recorder.hpp"
#include "eit/sinks/recording_annex.hpp"
#include "reference_choice.hpp"
#include "run_config.hpp"

namespace eit::cli {

struct Recorders {
  std::unique_ptr<sinks::Hdf5ImageRecorder> images;  // --record; null without
  std::unique_ptr<sinks::Hdf5FrameRecorder> frames;  // --record-raw; null without
};

// `annex` adds to the image file (the indices of `run --indices`); ignored without --record.
Recorders open_recorders(const RunConfig& c, const recon::Model& model,
                         const pipeline::Source& source, const ReferenceChoice& ref,
                         std::unique_ptr<sinks::RecordingAnnex> annex = nullptr);

// A recorder's summary: its own counts, plus the frames its queue dropped because the disk was
// slower than the live stream (live policy only), and why it stopped (`failure`, "" if it did
// not).
std::string sink_line(const char* what, const std::string& path, const pipeline::SinkStats& s,
                      const pipeline::SinkQueueStats& q, const std::string& failure);

// "" while both recorders write; else which stopped and why ("--record images.h5: writing rows
// … failed after 64 rows: No space left on device; …"). Any thread.
std::string recording_failure(const Recorders& r);

}  // namespace eit::cli
