#pragma once
// The engine of `eitstream reconstruct`: every frame of one recording through a backend into an
// image file, with reading, computing and writing overlapped on three threads.
//
//   reader thread ──filled──▶ calling thread ──computed──▶ writer thread ──free──▶ reader …
//   (decode a batch into      (submit/complete on the      (append the batch to the
//    pool slots)               backend, up to its           HDF5 image file, whole
//                              max_in_flight batches)       chunks at a time)
//
// Memory: `groups` batches of `batch` FramePool slots, allocated once from the backend's
// frame_allocator() (pinned for CUDA) and bound to it; batches circulate through three bounded
// channels of group numbers, so nothing is allocated per frame or per batch. The channels use a
// mutex and condition variable per hand-over of a whole batch (thousands of frames): this is an
// offline job, not the real-time path.
//
// Frames the reader cannot decode are skipped, counted, and the next frame carries
// kFlagGapBefore. A backend error (or any exception on a thread) stops all three threads and is
// rethrown on the calling thread after they are joined.
#include <cstddef>
#include <cstdint>

#include "eit/acquisition/recording_reader.hpp"
#include "eit/pipeline/reconstructor.hpp"
#include "eit/sinks/hdf5_image_recorder.hpp"
#include "progress_report.hpp"

namespace eit::cli {

struct OfflineResult {
  uint64_t read = 0, written = 0, unreadable = 0;
  uint64_t non_finite = 0;  // written with an empty image: a value was NaN/Inf (flag 1)
  double wall_s = 0;
  // Busy time of each thread (waiting for the others excluded): the split to look at when the
  // job is slower than the backend.
  double read_s = 0, compute_s = 0, write_s = 0;
  // CPU time of each thread: its cost with other load on the machine taken out (the calling
  // thread's includes waiting inside the backend when that spins).
  double read_cpu_s = 0, compute_cpu_s = 0, write_cpu_s = 0;
};

// Reconstructs frames 0..reader.info().n_frames-1 in batches of at most `batch` (capped by the
// backend's max_batch()). The backend's reference must already be set; the recorder receives
// every image in order and is ended (file closed) before this returns. progress is updated from
// the calling thread.
OfflineResult reconstruct_offline(acquisition::RecordingReader& reader,
                                  pipeline::Reconstructor& backend,
                                  sinks::Hdf5ImageRecorder& recorder, size_t batch,
                                  ProgressReport& progress);

}  // namespace eit::cli
