#pragma once
// Frame feeds for `eitstream emulate`: where the frames it plays out come from — a recording
// (any format open_replay knows, mapped to the chosen protocol, read unpaced: emulate paces) or
// the synthetic phantom (a FEM-simulated anomaly on a circle), or the breathing phantom
// (phantom:breathing?…, phantom_source.hpp). Set-up throws naming the file or
// option; next() is the per-frame call (no allocation).
#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "eit/acquisition/replay_source.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::cli {

class FrameFeed {
 public:
  virtual ~FrameFeed() = default;
  // What is played ("replay run1.eit (1200 frames, recorded at 50 Hz)"), never how fast:
  // emulate paces, and says so itself.
  virtual std::string describe() const = 0;
  virtual size_t n_values() const noexcept = 0;
  virtual double rate_hz() const noexcept = 0;  // 0 when the source does not say
  // Writes the next frame into out (n_values() floats); false at the end (not looping). Frames
  // the codec rejects are skipped and counted in bad_frames().
  virtual bool next(std::span<float> out) = 0;
  virtual uint64_t bad_frames() const = 0;
};

struct SyntheticFeedOptions {
  double h0 = 0.1;          // mesh size
  double snr_db = 60;       // measurement noise
  double revolution_s = 4;  // one orbit of the anomaly at the played rate
  uint64_t seed = 1;
};

// "synthetic", phantom:breathing?…, or a recording path. `played_rate_hz` (> 0): the rate
// emulate plays at, for which the phantoms time their motion (an orbit in revolution_s).
std::unique_ptr<FrameFeed> open_frame_feed(const std::string& from,
                                           const acquisition::ReplayOptions& replay,
                                           const SyntheticFeedOptions& synthetic,
                                           const recon::Protocol& protocol, double played_rate_hz);

}  // namespace eit::cli
