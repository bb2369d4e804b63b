#pragma once
// Options shared by the HDF5 image and raw-frame recorders (layouts in docs/formats.md).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace eit::sinks {

struct Hdf5RecorderOptions {
  std::string stream = "default";  // the stream name (as in the topics eit/<stream>/…)
  double frame_rate_hz = 0;        // nominal rate of the source (0: unknown)
  std::string reference;           // which reference the images use, in words (root attribute)
  std::string source;              // file name + content hash, or the device URI
  size_t chunk_frames = 64;        // rows per HDF5 chunk; publish() writes whole chunks
  int deflate = 0;                 // 0: no compression; 1–9: shuffle + deflate level
  int64_t flush_interval_ns = 1'000'000'000;  // tick() writes a partial chunk this often (SWMR)
  // Raw-frame recorder only: the reference frame in use when it is known at start (model or
  // given), stored as /v_ref so `eitstream reconstruct` can reproduce the images.
  std::vector<double> reference_values;
};

}  // namespace eit::sinks
