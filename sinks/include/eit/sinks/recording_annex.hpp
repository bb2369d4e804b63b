#pragma once
// RecordingAnnex: more per-frame data written into the image recorder's file beside /images (for
// example the clinical indices, indices/hdf5_indices_annex.hpp). The Hdf5ImageRecorder owns it
// and calls it on its own thread, so one HDF5 file has one writer.
//
// Order: create() once before the file goes into SWMR mode (HDF5 cannot add objects after that;
// throws std::runtime_error naming the file and object), then append() after each image row,
// flush() whenever the recorder makes its rows visible to readers, close() before the file is
// closed. append/flush/close never throw and count their failures in errors().
#include <cstdint>
#include <string>

#include "eit/pipeline/frame.hpp"

namespace eit::sinks {

class RecordingAnnex {
 public:
  virtual ~RecordingAnnex() = default;
  // `root`: the HDF5 file's id (an hid_t); `file`: its path, for messages.
  virtual void create(int64_t root, const std::string& file) = 0;
  virtual void append(const pipeline::FrameSlot& frame) noexcept = 0;
  virtual void flush() noexcept = 0;
  virtual void close() noexcept = 0;
  virtual uint64_t errors() const noexcept = 0;
};

}  // namespace eit::sinks
