#pragma once
// SyntheticPhantomSource: a 2-D body with a conductive anomaly moving on a circle, measured with
// the model's protocol. Voltages come from recon's FEM ForwardModel on a mesh: K anomaly
// positions are solved once at construction (PhantomTable); each frame interpolates linearly
// between the two nearest positions and adds Gaussian noise of the given SNR.
//
// Pacing: rate_hz > 0 — open loop on a schedule, frame i is due at t0 + i/rate (stamped
// kScheduled; a late frame is produced at once, never skipped); rate_hz = 0 — as fast as read()
// is called. A paced frame's values are made before its due time (a device's frame is complete
// when it arrives), so kScheduled → kReceived is the wake-up alone. frames > 0 ends the stream
// after that many frames (kEnd).
//
// Threads: read() on the acquisition thread; stop() and stats() from any thread. read() never
// allocates (table, noise generator and scratch are built in the constructor).
#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "eit/pipeline/source.hpp"
#include "eit/recon/mesh.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::acquisition {

struct PhantomOptions {
  int positions = 64;                // K precomputed anomaly positions on the orbit
  double orbit_radius = 0.5;         // centre of the anomaly, fraction of the body radius
  double anomaly_radius = 0.2;       // fraction of the body radius
  double anomaly_conductivity = 10;  // background is 1
  double revolution_s = 4.0;         // one orbit per this many seconds (paced)
  int frames_per_revolution = 200;   // one orbit per this many frames (unpaced)
  double snr_db = 60;                // noise σ = rms(v_homogeneous) · 10^(−snr/20); inf: none
  double rate_hz = 50;               // 0: as fast as possible
  uint64_t frames = 0;               // 0: unlimited
  uint64_t seed = 1;
  // Paced: busy-wait the last spin_ns before each frame is due instead of sleeping (bench's
  // `--latency-mode spin` sets kSpinWholeWait): a sleep wakes 6-20 µs late, which a device's frame
  // arriving on a busy-polled socket would not be. kSpinWholeWait: never sleep, poll the clock
  // for the whole wait (a dedicated host: a timer wake-up delayed by another runnable thread on
  // the CPU would otherwise land in the latency).
  int64_t spin_ns = 0;
  // While polling the clock, offer the CPU to other runnable threads (sched_yield): for a source
  // whose CPU other stages share (bench --cpus with fewer CPUs than threads), which would
  // otherwise run only when the scheduler takes the CPU from the polling source.
  bool yield_polls = false;
  // What describe() calls it: "<name> (<details>, K positions, SNR …, rate)". The breathing
  // phantom sets both (breathing_source_options), so `run` labels the source it really plays.
  std::string name = "synthetic phantom";
  std::string details;
};
inline constexpr int64_t kSpinWholeWait = INT64_MAX;

// Noiseless voltages: one row per anomaly position (K × n_meas), and the homogeneous body.
struct PhantomTable {
  Eigen::MatrixXd frames;
  Eigen::VectorXd homogeneous;
};

// Solves the forward model for the K positions (allocates; milliseconds per position).
// Throws std::invalid_argument for bad options or a protocol that does not fit the mesh.
PhantomTable make_phantom_table(const recon::Mesh& mesh, const recon::Protocol& protocol,
                                const PhantomOptions& options);

// Breathing instead of an orbiting anomaly: two lung discs (patient's right at −x, left at +x,
// towards −y) whose conductivity falls by conductivity_drop · (1 − cos 2π t/T)/2 at
// breaths_per_min, the right lung lagging by right_delay_s. One table row per phase of one breath;
// the source plays it as one "revolution" per breath (breathing_source_options).
struct BreathingOptions {
  double breaths_per_min = 20;
  double conductivity_drop = 0.3;  // lung conductivity 1 → 1 − drop at end inspiration
  double right_delay_s = 0;
  double lung_radius = 0.28;  // fraction of the body radius
  int positions = 64;         // table rows per breath
};
PhantomTable make_breathing_table(const recon::Mesh& mesh, const recon::Protocol& protocol,
                                  const BreathingOptions& options);
// `base` with positions, revolution_s and frames_per_revolution set for one breath per cycle, and
// named "breathing phantom" with describe_breathing() as its details.
PhantomOptions breathing_source_options(const BreathingOptions& breathing, PhantomOptions base);
// "30 breaths/min, tidal drop 0.3, right lung 0 s behind, lung radius 0.28": the breathing in
// the words `run` and `emulate` both label the phantom with.
std::string describe_breathing(const BreathingOptions& breathing);

class SyntheticPhantomSource final : public pipeline::Source {
 public:
  SyntheticPhantomSource(const recon::Mesh& mesh, const recon::Protocol& protocol,
                         PhantomOptions options = {});
  // From a table computed elsewhere (tests, or a cached table).
  SyntheticPhantomSource(PhantomTable table, PhantomOptions options = {});

  std::string describe() const override;
  size_t n_values() const noexcept override { return static_cast<size_t>(table_.frames.cols()); }
  double nominal_rate_hz() const noexcept override { return options_.rate_hz; }
  pipeline::ReadStatus read(pipeline::FrameSlot& slot, std::chrono::milliseconds timeout) override;
  void stop() noexcept override { stopped_.store(true, std::memory_order_release); }
  pipeline::SourceStats stats() const override;

  const PhantomTable& table() const noexcept { return table_; }
  const PhantomOptions& options() const noexcept { return options_; }
  // PhantomOptions::yield_polls, for callers that learn where the source runs after making it.
  // Set-up only: before the first read().
  void set_yield_polls(bool yield) noexcept { options_.yield_polls = yield; }
  // The noiseless values of frame `seq` (what read() delivers before noise), for checks.
  void noiseless(uint64_t seq, double* out) const noexcept;
  double noise_sigma() const noexcept { return sigma_; }

 private:
  struct Blend {
    Eigen::Index k0 = 0, k1 = 0;
    double a = 0;  // weight of k1
  };
  Blend blend(uint64_t seq) const noexcept;

  PhantomTable table_;
  // table_.frames row-major, so that read() streams two contiguous rows (the column-major table
  // strides by K doubles per value).
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rows_;
  PhantomOptions options_;
  double sigma_ = 0;
  int64_t period_ns_ = 0;
  int64_t t0_ns_ = 0;
  uint64_t next_seq_ = 0;
  std::mt19937_64 rng_;
  std::normal_distribution<double> normal_{0.0, 1.0};
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> frames_{0};
};

}  // namespace eit::acquisition
