#pragma once
// Frame feeds for `eitstream emulate`: where the frames it plays out come from — a recording
// (any format open_recording_reader knows, mapped to the chosen protocol) or the synthetic
// phantom (a FEM-simulated anomaly on a circle). Set-up throws naming the file or option;
// next() is the per-frame call (no allocation).
#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "eit/acquisition/recording_reader.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::cli {

class FrameFeed {
 public:
  virtual ~FrameFeed() = default;
  virtual std::string describe() const = 0;
  virtual size_t n_values() const noexcept = 0;
  virtual double rate_hz() const noexcept = 0;  // 0 when the source does not say
  // Frames before the feed ends when not looping (0: endless).
  virtual size_t length() const noexcept = 0;
  // Writes the next frame into out (n_values() floats); false at the end (when not looping)
  // or when the frame could not be decoded (counted by the caller).
  virtual bool next(std::span<float> out) = 0;
};

struct SyntheticFeedOptions {
  double h0 = 0.1;          // mesh size
  double snr_db = 60;       // measurement noise
  double revolution_s = 4;  // one orbit of the anomaly at the played rate
  uint64_t seed = 1;
};

// "synthetic" or a recording path.
std::unique_ptr<FrameFeed> open_frame_feed(const std::string& from,
                                           const acquisition::RecordingOptions& recording,
                                           const SyntheticFeedOptions& synthetic,
                                           const recon::Protocol& protocol, bool loop,
                                           double played_rate_hz);

}  // namespace eit::cli
