// Frame feeds for emulate: a Source read as fast as it gives frames — the ReplaySource of a
// recording (unpaced, looping when asked) or the SyntheticPhantomSource (unpaced).
#include "emulate_feed.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/pipeline/frame.hpp"
#include "eit/recon/layered_circle_mesh.hpp"
#include "eit/recon/mesh_generator.hpp"
#include "phantom_source.hpp"

namespace eit::cli {
namespace {

// `what`: the feed's description. Not the source's own describe(): read unpaced, that says
// "unpaced" or "as fast as possible", while emulate paces what it sends.
class SourceFeed final : public FrameFeed {
 public:
  SourceFeed(std::unique_ptr<pipeline::Source> source, double rate_hz, std::string what)
      : source_(std::move(source)),
        rate_hz_(rate_hz),
        what_(std::move(what)),
        values_(source_->n_values()) {
    slot_.values = values_.data();
  }
  std::string describe() const override { return what_; }
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
  std::string what_;
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

std::unique_ptr<FrameFeed> synthetic_feed(const recon::Protocol& protocol,
                                          const SyntheticFeedOptions& o, double rate_hz) {
  acquisition::PhantomOptions p;
  p.rate_hz = 0;  // emulate paces
  p.snr_db = o.snr_db;
  p.seed = o.seed;
  p.frames_per_revolution = std::max(8, static_cast<int>(std::lround(o.revolution_s * rate_hz)));
  return std::make_unique<SourceFeed>(
      std::make_unique<acquisition::SyntheticPhantomSource>(phantom_mesh(protocol, o), protocol, p),
      0.0,
      fmt::format("synthetic phantom (an orbiting anomaly, one orbit per {} frames, SNR {:g} dB)",
                  p.frames_per_revolution, o.snr_db));
}

// "replay run1.eit (1200 frames, recorded at 50 Hz)": the file, without the pace.
std::string replay_description(const std::string& from, const acquisition::ReplaySource& r) {
  std::string s = "replay " + std::filesystem::path(from).filename().string();
  std::string details;
  if (const uint64_t frames = r.progress().frames_in_file; frames > 0)
    details = fmt::format("{} frames", frames);
  if (r.recorded_rate_hz() > 0)
    details +=
        fmt::format("{}recorded at {:g} Hz", details.empty() ? "" : ", ", r.recorded_rate_hz());
  return details.empty() ? s : fmt::format("{} ({})", s, details);
}

}  // namespace

std::unique_ptr<FrameFeed> open_frame_feed(const std::string& from,
                                           const acquisition::ReplayOptions& replay,
                                           const SyntheticFeedOptions& synthetic,
                                           const recon::Protocol& protocol, double played_rate_hz) {
  if (from == "synthetic") return synthetic_feed(protocol, synthetic, played_rate_hz);
  if (const auto breathing = parse_breathing_source(from)) {
    return std::make_unique<SourceFeed>(
        open_breathing_phantom(*breathing, played_rate_hz, synthetic.snr_db, protocol,
                               phantom_mesh(protocol, synthetic), /*paced=*/false),
        0.0,
        fmt::format("breathing phantom ({}, SNR {:g} dB)",
                    acquisition::describe_breathing(*breathing), synthetic.snr_db));
  }
  acquisition::ReplayOptions unpaced = replay;
  unpaced.unpaced = true;
  unpaced.fps = 0;  // --fps is the pace emulate plays at, not the rate the file was recorded at
  auto source = acquisition::open_replay(from, unpaced, protocol);
  const double rate = source->recorded_rate_hz();
  std::string what = replay_description(from, *source);
  return std::make_unique<SourceFeed>(std::move(source), rate, std::move(what));
}

}  // namespace eit::cli
