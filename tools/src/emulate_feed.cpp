// Frame feeds for emulate: a RecordingReader walked in order (wrapping when looping), or the
// SyntheticPhantomSource read unpaced (emulate paces the output itself).
#include "emulate_feed.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/pipeline/frame.hpp"
#include "eit/recon/mesh_generator.hpp"

namespace eit::cli {
namespace {

class RecordingFeed final : public FrameFeed {
 public:
  RecordingFeed(std::unique_ptr<acquisition::RecordingReader> reader, bool loop)
      : reader_(std::move(reader)), loop_(loop) {
    if (reader_->info().n_frames == 0) {
      throw std::runtime_error(fmt::format("{}: no whole frame to play; expected at least one",
                                           reader_->info().path.string()));
    }
  }
  std::string describe() const override {
    const auto& i = reader_->info();
    return fmt::format(
        "{} ({}, {} frames{})", i.path.filename().string(), i.format, i.n_frames,
        i.rate_hz > 0 ? fmt::format(", {} Hz from {}", i.rate_hz, i.rate_source) : std::string());
  }
  size_t n_values() const noexcept override { return reader_->n_values(); }
  double rate_hz() const noexcept override { return reader_->info().rate_hz; }
  size_t length() const noexcept override { return loop_ ? 0 : reader_->info().n_frames; }
  bool next(std::span<float> out) override {
    if (next_ == reader_->info().n_frames) {
      if (!loop_) return false;
      next_ = 0;
    }
    return reader_->read(next_++, out);
  }

 private:
  std::unique_ptr<acquisition::RecordingReader> reader_;
  bool loop_;
  size_t next_ = 0;
};

class SyntheticFeed final : public FrameFeed {
 public:
  SyntheticFeed(const recon::Protocol& protocol, const SyntheticFeedOptions& o, double rate_hz)
      : source_(recon::generate_mesh({.outline = recon::CircleOutline{},
                                      .n_electrodes = protocol.n_electrodes,
                                      .h0 = o.h0}),
                protocol, phantom_options(o, rate_hz)),
        values_(protocol.n_meas()) {
    slot_.values = values_.data();
  }
  std::string describe() const override { return source_.describe(); }
  size_t n_values() const noexcept override { return source_.n_values(); }
  double rate_hz() const noexcept override { return 0.0; }
  size_t length() const noexcept override { return 0; }
  bool next(std::span<float> out) override {
    if (source_.read(slot_, std::chrono::milliseconds(1000)) != acquisition::ReadStatus::kFrame) {
      return false;
    }
    std::copy(values_.begin(), values_.end(), out.begin());
    return true;
  }

 private:
  static acquisition::PhantomOptions phantom_options(const SyntheticFeedOptions& o, double rate) {
    acquisition::PhantomOptions p;
    p.rate_hz = 0;  // emulate paces
    p.snr_db = o.snr_db;
    p.seed = o.seed;
    p.frames_per_revolution = std::max(8, static_cast<int>(std::lround(o.revolution_s * rate)));
    return p;
  }

  acquisition::SyntheticPhantomSource source_;
  std::vector<float> values_;
  pipeline::FrameSlot slot_;
};

}  // namespace

std::unique_ptr<FrameFeed> open_frame_feed(const std::string& from,
                                           const acquisition::RecordingOptions& recording,
                                           const SyntheticFeedOptions& synthetic,
                                           const recon::Protocol& protocol, bool loop,
                                           double played_rate_hz) {
  if (from == "synthetic") {
    return std::make_unique<SyntheticFeed>(protocol, synthetic,
                                           played_rate_hz > 0 ? played_rate_hz : 50.0);
  }
  return std::make_unique<RecordingFeed>(
      acquisition::open_recording_reader(from, recording, protocol), loop);
}

}  // namespace eit::cli
