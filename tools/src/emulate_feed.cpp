// Frame feeds for emulate: a Source read as fast as it gives frames — the ReplaySource of a
// recording (unpaced, looping when asked) or the SyntheticPhantomSource (unpaced).
#include "emulate_feed.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/pipeline/frame.hpp"
#include "eit/recon/layered_circle_mesh.hpp"
#include "eit/recon/mesh_generator.hpp"
#include "phantom_source.hpp"

namespace eit::cli {
namespace {

class SourceFeed final : public FrameFeed {
 public:
  SourceFeed(std::unique_ptr<pipeline::Source> source, double rate_hz)
      : source_(std::move(source)), rate_hz_(rate_hz), values_(source_->n_values()) {
    slot_.values = values_.data();
  }
  std::string describe() const override { return source_->describe(); }
  size_t n_values() const noexcept override { return values_.size(); }
  double rate_hz() const noexcept override { return rate_hz_; }
  uint64_t bad_frames() const override { return source_->stats().bad_frames; }
  bool next(std::span<float> out) override {
    for (;;) {
      switch (source_->read(slot_, std::chrono::milliseconds(1000))) {
        case pipeline::ReadStatus::kFrame:
          std::copy(values_.begin(), values_.end(), out.begin());
          return true;
        case pipeline::ReadStatus::kTimeout:
          continue;
        case pipeline::ReadStatus::kEnd:
        case pipeline::ReadStatus::kStopped:
          return false;
      }
    }
  }

 private:
  std::unique_ptr<pipeline::Source> source_;
  double rate_hz_;
  std::vector<float> values_;
  pipeline::FrameSlot slot_;
};

// Without Gmsh (the GPU machine), the structured ring mesh stands in, as for `run`.
recon::Mesh phantom_mesh(const recon::Protocol& protocol, const SyntheticFeedOptions& o) {
  if (!recon::mesh_generator_available())
    return recon::layered_circle_mesh(protocol.n_electrodes, 8);
  recon::MeshOptions mesh;
  mesh.outline = recon::CircleOutline{};
  mesh.n_electrodes = protocol.n_electrodes;
  mesh.h0 = o.h0;
  return recon::generate_mesh(mesh);
}

std::unique_ptr<pipeline::Source> synthetic_source(const recon::Protocol& protocol,
                                                   const SyntheticFeedOptions& o, double rate_hz) {
  acquisition::PhantomOptions p;
  p.rate_hz = 0;  // emulate paces
  p.snr_db = o.snr_db;
  p.seed = o.seed;
  p.frames_per_revolution = std::max(8, static_cast<int>(std::lround(o.revolution_s * rate_hz)));
  return std::make_unique<acquisition::SyntheticPhantomSource>(phantom_mesh(protocol, o), protocol,
                                                               p);
}

}  // namespace

std::unique_ptr<FrameFeed> open_frame_feed(const std::string& from,
                                           const acquisition::ReplayOptions& replay,
                                           const SyntheticFeedOptions& synthetic,
                                           const recon::Protocol& protocol, double played_rate_hz) {
  if (from == "synthetic") {
    const double rate = played_rate_hz > 0 ? played_rate_hz : 50.0;
    return std::make_unique<SourceFeed>(synthetic_source(protocol, synthetic, rate), 0.0);
  }
  if (const auto breathing = parse_breathing_source(from)) {
    const double rate = played_rate_hz > 0 ? played_rate_hz : 50.0;
    return std::make_unique<SourceFeed>(
        open_breathing_phantom(*breathing, rate, synthetic.snr_db, protocol,
                               phantom_mesh(protocol, synthetic), /*paced=*/false),
        0.0);
  }
  acquisition::ReplayOptions unpaced = replay;
  unpaced.unpaced = true;
  auto source = acquisition::open_replay(from, unpaced, protocol);
  const double rate = source->recorded_rate_hz();
  return std::make_unique<SourceFeed>(std::move(source), rate);
}

}  // namespace eit::cli
