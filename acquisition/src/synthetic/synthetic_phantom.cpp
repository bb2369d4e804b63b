// GCC 12: false -Wmaybe-uninitialized inside avx512fintrin.h from Eigen's packet code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "eit/acquisition/synthetic_phantom.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "eit/pipeline/clock.hpp"

namespace eit::acquisition {
namespace {

void check_options(const PhantomOptions& o) {
  if (o.positions < 2)
    throw std::invalid_argument(
        fmt::format("synthetic phantom: {} positions, expected at least 2", o.positions));
  if (!(o.rate_hz >= 0) || !std::isfinite(o.rate_hz))
    throw std::invalid_argument(
        fmt::format("synthetic phantom: rate {} Hz, expected ≥ 0 (0: unpaced)", o.rate_hz));
  if (!(o.revolution_s > 0) || o.frames_per_revolution < 1)
    throw std::invalid_argument(
        fmt::format("synthetic phantom: revolution {} s / {} frames, expected > 0", o.revolution_s,
                    o.frames_per_revolution));
  if (std::isnan(o.snr_db))
    throw std::invalid_argument("synthetic phantom: SNR is NaN, expected dB or inf");
  if (o.spin_ns < 0)
    throw std::invalid_argument(
        fmt::format("synthetic phantom: spin {} ns, expected ≥ 0 (0: sleep until due)", o.spin_ns));
}

// Sleeps until `deadline` (CLOCK_MONOTONIC ns) in steps of at most 10 ms, so stop() is prompt.
bool sleep_until(int64_t deadline, const std::atomic<bool>& stopped) {
  while (true) {
    if (stopped.load(std::memory_order_acquire)) return false;
    const int64_t left = deadline - pipeline::now_ns();
    if (left <= 0) return true;
    const int64_t step = std::min<int64_t>(left, 10'000'000);
    timespec ts{static_cast<time_t>(step / 1'000'000'000), static_cast<long>(step % 1'000'000'000)};
    nanosleep(&ts, nullptr);
  }
}

// Sleeps until spin_ns before the deadline, then polls the clock; false when stopped first.
// spin_ns at least the time left (kSpinWholeWait): no sleep at all. Never computes
// deadline − spin_ns unless it is later than now, so a huge spin_ns cannot overflow.
// yield: offer the CPU between clock reads (PhantomOptions::yield_polls).
bool wait_until(int64_t deadline, int64_t spin_ns, bool yield, const std::atomic<bool>& stopped) {
  if (deadline - pipeline::now_ns() > spin_ns && !sleep_until(deadline - spin_ns, stopped))
    return false;
  while (pipeline::now_ns() < deadline) {
    if (stopped.load(std::memory_order_relaxed)) return false;
    if (yield) sched_yield();
  }
  return true;
}

}  // namespace

SyntheticPhantomSource::SyntheticPhantomSource(PhantomTable table, PhantomOptions options)
    : table_(std::move(table)), options_(options), rng_(options.seed) {
  check_options(options_);
  if (table_.frames.rows() < 2 || table_.frames.cols() == 0 ||
      table_.homogeneous.size() != table_.frames.cols())
    throw std::invalid_argument(fmt::format(
        "synthetic phantom: table is {}×{} with a {}-value homogeneous frame, expected K ≥ 2 rows "
        "and matching columns",
        table_.frames.rows(), table_.frames.cols(), table_.homogeneous.size()));
  const double rms =
      std::sqrt(table_.homogeneous.squaredNorm() / static_cast<double>(table_.homogeneous.size()));
  rows_ = table_.frames;  // row-major: one position's values contiguous for read()
  sigma_ = std::isinf(options_.snr_db) ? 0.0 : rms * std::pow(10.0, -options_.snr_db / 20.0);
  period_ns_ =
      options_.rate_hz > 0 ? static_cast<int64_t>(std::llround(1e9 / options_.rate_hz)) : 0;
}

std::string SyntheticPhantomSource::describe() const {
  return fmt::format(
      "{} ({}{} positions, SNR {} dB, {})", options_.name,
      options_.details.empty() ? "" : options_.details + ", ", table_.frames.rows(),
      options_.snr_db,
      options_.rate_hz > 0 ? fmt::format("{} frames/s", options_.rate_hz) : std::string("unpaced"));
}

SyntheticPhantomSource::Blend SyntheticPhantomSource::blend(uint64_t seq) const noexcept {
  const auto k = table_.frames.rows();
  const double per_rev = options_.rate_hz > 0 ? options_.revolution_s * options_.rate_hz
                                              : static_cast<double>(options_.frames_per_revolution);
  const double turns = static_cast<double>(seq) / per_rev;
  const double p = (turns - std::floor(turns)) * static_cast<double>(k);
  Blend b;
  b.k0 = std::min<Eigen::Index>(static_cast<Eigen::Index>(p), k - 1);
  b.k1 = (b.k0 + 1) % k;
  b.a = p - static_cast<double>(b.k0);
  return b;
}

void SyntheticPhantomSource::noiseless(uint64_t seq, double* out) const noexcept {
  const Blend b = blend(seq);
  for (Eigen::Index i = 0; i < table_.frames.cols(); ++i)
    out[i] = (1 - b.a) * table_.frames(b.k0, i) + b.a * table_.frames(b.k1, i);
}

pipeline::ReadStatus SyntheticPhantomSource::read(pipeline::FrameSlot& slot,
                                                  std::chrono::milliseconds timeout) {
  if (stopped_.load(std::memory_order_acquire)) return pipeline::ReadStatus::kStopped;
  if (options_.frames && next_seq_ >= options_.frames) return pipeline::ReadStatus::kEnd;
  int64_t scheduled = 0;
  if (period_ns_ > 0) {
    if (next_seq_ == 0 && t0_ns_ == 0) t0_ns_ = pipeline::now_ns();
    scheduled = t0_ns_ + static_cast<int64_t>(next_seq_) * period_ns_;
    const int64_t limit = pipeline::now_ns() + timeout.count() * 1'000'000;
    if (scheduled > limit) {  // waits like a frame's wait (spinning the same share of it)
      return wait_until(limit, options_.spin_ns, options_.yield_polls, stopped_)
                 ? pipeline::ReadStatus::kTimeout
                 : pipeline::ReadStatus::kStopped;
    }
  }
  // Interpolate straight into the slot (float), adding noise in double first. Two contiguous
  // rows: the noiseless loop vectorises; the noisy one draws in measurement order, as before.
  const Blend b = blend(next_seq_);
  const double* r0 = rows_.row(b.k0).data();
  const double* r1 = rows_.row(b.k1).data();
  const double w0 = 1 - b.a, w1 = b.a;
  const Eigen::Index n = rows_.cols();
  float* out = slot.values;
  if (sigma_ > 0) {
    for (Eigen::Index i = 0; i < n; ++i) {
      double v = w0 * r0[i] + w1 * r1[i];
      v += sigma_ * normal_(rng_);
      out[i] = static_cast<float>(v);
    }
  } else {
    for (Eigen::Index i = 0; i < n; ++i) out[i] = static_cast<float>(w0 * r0[i] + w1 * r1[i]);
  }
  if (period_ns_ > 0 && !wait_until(scheduled, options_.spin_ns, options_.yield_polls, stopped_))
    return pipeline::ReadStatus::kStopped;
  slot.seq = next_seq_++;
  const int64_t t = pipeline::now_ns();
  slot.stamp(pipeline::Stage::kReceived, t);
  slot.stamp(pipeline::Stage::kScheduled, period_ns_ > 0 ? scheduled : t);
  frames_.store(frames_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return pipeline::ReadStatus::kFrame;
}

pipeline::SourceStats SyntheticPhantomSource::stats() const {
  pipeline::SourceStats s;
  s.frames = frames_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace eit::acquisition
