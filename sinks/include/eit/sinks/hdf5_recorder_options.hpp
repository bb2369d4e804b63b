#pragma once
// Options shared by the HDF5 image and raw-frame recorders (layouts in docs/formats.md).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace eit::sinks {

struct Hdf5RecorderOptions {
  std::string stream = "default";  // the stream name (as in the topics eit/<stream>/…)
  double frame_rate_hz = 0;        // nominal rate of the source (0: unknown)
  std::string reference;           // which reference the images use, in words (root attribute)
  std::string source;              // file name + content hash, or the device URI
  size_t chunk_frames = 64;        // rows per HDF5 chunk; publish() writes whole chunks
  // An existing file at the path is refused (an earlier recording is never lost to a repeated
  // command, and two runs cannot share one file); true replaces it.
  bool replace_existing = false;
  int deflate = 0;                 // 0: no compression; 1–9: shuffle + deflate level
  int64_t flush_interval_ns = 1'000'000'000;  // tick() writes a partial chunk this often (SWMR)
  // Whole chunks are made visible to SWMR readers as each is written (each dataset flushed,
  // the per-frame columns before the data). Offline jobs (reconstruct) turn it off: a chunk then
  // costs ~15 fewer small writes, and the rows are flushed, in that order, at each tick() and at
  // close (HDF5 may write some of their metadata earlier on its own, in no set order).
  bool flush_each_chunk = true;
  // Raw-frame recorder only: the reference frame in use when it is known at start (model or
  // given), stored as /v_ref so `eitstream reconstruct` can reproduce the images.
  std::vector<double> reference_values;
  // Live runs: when the recorder falls behind (a slow disk) its own sink queue drops the newest
  // frame, counted in the pipeline's per-sink stats and in the file's dropped_before column,
  // instead of making the pipeline wait (policy() kDropNewest instead of kBlock). Lossless runs
  // leave it false: the whole run then waits for the disk.
  bool drop_when_behind = false;
  // The recording stops cleanly, before a chunk write would leave less than this free on the
  // file's disk: the file is then closed whole and readable (a write that fails on a full disk
  // leaves HDF5 unable to finish the file). 0: never checked.
  uint64_t min_free_bytes = uint64_t{16} << 20;
  // Test hook: the bytes free on the file's disk (default: statvfs of the file's folder).
  std::function<uint64_t()> free_bytes;
  // Test hook: called on the recorder's thread right before each chunk write to the file (not per
  // frame). A hook that sleeps or blocks is a slow or stalled disk, seen by the real write path.
  std::function<void()> before_write;
};

}  // namespace eit::sinks
