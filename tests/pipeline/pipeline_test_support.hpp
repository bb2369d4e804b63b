#pragma once
// Test doubles for pipeline tests: a random model, a Source that replays given frames, a sink
// that records what it sees (optionally stalling until released), and a bounded wait for a run.
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <Eigen/Core>

#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/image_sink.hpp"
#include "eit/pipeline/paced_source.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/pipeline/source.hpp"
#include "eit/recon/model.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::test {

// A 16-electrode adjacent-protocol model with a random H (n_out × 208) and a positive v_ref.
inline recon::Model random_model(int n_out = 1024, uint64_t seed = 7) {
  recon::Model m;
  m.algorithm = "random";
  m.protocol = recon::make_protocol({});
  const auto n_meas = static_cast<Eigen::Index>(m.protocol.n_meas());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  m.H.resize(n_out, n_meas);
  for (Eigen::Index i = 0; i < m.H.size(); ++i) m.H.data()[i] = static_cast<float>(u(rng));
  m.v_ref.resize(n_meas);
  for (Eigen::Index i = 0; i < n_meas; ++i) m.v_ref[i] = 0.5 + 0.5 * std::abs(u(rng));
  recon::GridGeometry grid;
  grid.nx = 32;
  grid.ny = n_out / 32;
  grid.dx = grid.dy = 2.0 / 32;
  grid.x0 = grid.y0 = -1 + grid.dx / 2;
  grid.mask.assign(static_cast<size_t>(n_out), 0);
  m.geometry = grid;
  m.id = "random-test-model";
  return m;
}

// Frames of v_ref plus random perturbations (float, as a device would send them).
inline std::vector<std::vector<float>> random_frames(const recon::Model& m, size_t n,
                                                     uint64_t seed = 11) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, 0.05);
  std::vector<std::vector<float>> frames(n, std::vector<float>(m.n_meas()));
  for (auto& f : frames)
    for (size_t i = 0; i < f.size(); ++i)
      f[i] = static_cast<float>(m.v_ref[static_cast<Eigen::Index>(i)] * (1 + g(rng)));
  return frames;
}

// H·w⊙(v − v_ref) in double, independently of the code under test.
inline Eigen::VectorXd expected_image(const recon::Model& m, const std::vector<float>& v,
                                      const Eigen::VectorXd& v_ref, bool normalize) {
  Eigen::VectorXd dv(v_ref.size());
  for (Eigen::Index i = 0; i < dv.size(); ++i) {
    dv[i] = static_cast<double>(v[static_cast<size_t>(i)]) - v_ref[i];
    if (normalize) dv[i] /= std::abs(v_ref[i]);
  }
  return m.H.cast<double>() * dv;
}

// Replays frames (seq = index), unpaced; kEnd after the last.
class VectorSource final : public eit::pipeline::Source {
 public:
  explicit VectorSource(std::vector<std::vector<float>> frames, size_t n_values = 0)
      : frames_(std::move(frames)),
        n_values_(n_values ? n_values : (frames_.empty() ? 0 : frames_[0].size())) {}
  std::string describe() const override { return "test vector source"; }
  size_t n_values() const noexcept override { return n_values_; }
  eit::pipeline::ReadStatus read(pipeline::FrameSlot& slot, std::chrono::milliseconds) override {
    if (stopped_.load()) return eit::pipeline::ReadStatus::kStopped;
    if (next_ >= frames_.size()) return eit::pipeline::ReadStatus::kEnd;
    std::copy(frames_[next_].begin(), frames_[next_].end(), slot.values);
    slot.seq = next_++;
    delivered_.store(next_);
    return eit::pipeline::ReadStatus::kFrame;
  }
  void stop() noexcept override { stopped_.store(true); }
  eit::pipeline::SourceStats stats() const override {
    eit::pipeline::SourceStats s;
    s.frames = delivered_.load();
    return s;
  }
  uint64_t delivered() const { return delivered_.load(); }

 private:
  std::vector<std::vector<float>> frames_;
  size_t n_values_;
  size_t next_ = 0;
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> delivered_{0};
};

struct ReceivedFrame {
  uint64_t seq;
  uint32_t flags, dropped_before;
  std::vector<float> image;
};

// Records every frame (copying the image; tests only). With stall(), publish() waits until
// release() — a consumer that has stopped reading.
class CollectingSink final : public pipeline::ImageSink {
 public:
  explicit CollectingSink(size_t n_out,
                          pipeline::SinkPolicy policy = pipeline::SinkPolicy::kDropNewest)
      : n_out_(n_out), policy_(policy) {}
  std::string_view name() const noexcept override { return "collect"; }
  pipeline::SinkPolicy policy() const noexcept override { return policy_; }
  // The thread that called publish() last (each sink has its own).
  std::thread::id publisher_thread() const {
    std::lock_guard lock(mutex_);
    return thread_;
  }
  void publish(const pipeline::FrameSlot& f) noexcept override {
    while (stalled_.load()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (slow_us_) std::this_thread::sleep_for(std::chrono::microseconds(slow_us_));
    std::lock_guard lock(mutex_);
    thread_ = std::this_thread::get_id();
    frames_.push_back(
        {f.seq, f.flags, f.dropped_before, std::vector<float>(f.image, f.image + n_out_)});
    for (int s = 0; s < static_cast<int>(pipeline::kStageCount); ++s)
      if (s > 0 && f.stamp_ns[s] && f.stamp_ns[s - 1] && f.stamp_ns[s] < f.stamp_ns[s - 1])
        ++stamps_out_of_order_;
  }
  pipeline::SinkStats stats() const noexcept override { return {count(), 0, 0}; }
  void stall() { stalled_.store(true); }
  void release() { stalled_.store(false); }
  void slow(int us) { slow_us_ = us; }
  uint64_t count() const noexcept {
    std::lock_guard lock(mutex_);
    return frames_.size();
  }
  std::vector<ReceivedFrame> frames() const {
    std::lock_guard lock(mutex_);
    return frames_;
  }
  int stamps_out_of_order() const { return stamps_out_of_order_; }

 private:
  size_t n_out_;
  pipeline::SinkPolicy policy_;
  std::thread::id thread_;
  std::atomic<bool> stalled_{false};
  int slow_us_ = 0;
  mutable std::mutex mutex_;
  std::vector<ReceivedFrame> frames_;
  int stamps_out_of_order_ = 0;
};

inline double relative_error(const std::vector<float>& got, const Eigen::VectorXd& want) {
  double num = 0, den = 0;
  for (Eigen::Index i = 0; i < want.size(); ++i) {
    const double d = got[static_cast<size_t>(i)] - want[i];
    num += d * d;
    den += want[i] * want[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

// The CPU backend on one thread, batches of up to `batch` frames.
inline std::unique_ptr<pipeline::Reconstructor> cpu_backend(const recon::Model& m,
                                                            size_t batch = 16) {
  return std::make_unique<pipeline::CpuReconstructor>(m, pipeline::CpuOptions{batch});
}

// The CPU backend (batches of up to 4, one in flight) under a test's own name: a base for test
// backends that observe or alter what passes through (override complete(), warm(), …).
class ForwardingCpuBackend : public pipeline::Reconstructor {
 public:
  ForwardingCpuBackend(const recon::Model& m, std::string_view name)
      : inner_(m, {4}), name_(name) {}
  std::string_view name() const noexcept override { return name_; }
  size_t n_meas() const noexcept override { return inner_.n_meas(); }
  size_t n_out() const noexcept override { return inner_.n_out(); }
  size_t max_batch() const noexcept override { return 4; }
  size_t max_in_flight() const noexcept override { return 1; }
  void set_reference(std::span<const double> v, bool n) override { inner_.set_reference(v, n); }
  bool submit(std::span<pipeline::FrameSlot* const> batch) override { return inner_.submit(batch); }
  size_t complete(std::span<pipeline::FrameSlot*> out, bool wait) override {
    return inner_.complete(out, wait);
  }
  size_t in_flight() const noexcept override { return inner_.in_flight(); }

 protected:
  pipeline::CpuReconstructor& inner() noexcept { return inner_; }

 private:
  pipeline::CpuReconstructor inner_;
  std::string_view name_;
};

// Waits (bounded) for the pipeline to finish, then joins it; false on timeout.
inline bool wait_finished(pipeline::Pipeline& p,
                          std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!p.finished()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  p.wait();
  return true;
}

// Streams `frames` random frames of `m` through a pipeline with `backend`, paced at `rate`
// frames/s (PacedSource), waits for it and checks every frame reached the sink; its stats.
inline pipeline::PipelineStats run_paced(const recon::Model& m, size_t frames, double rate,
                                         std::unique_ptr<pipeline::Reconstructor> backend,
                                         const pipeline::PipelineOptions& options) {
  const auto data = random_frames(m, frames);
  VectorSource inner(data);
  pipeline::PacedSource source(inner, {rate, 1});
  CollectingSink sink(m.n_out());
  pipeline::Pipeline p(m, source, std::move(backend), {&sink}, options);
  p.start();
  REQUIRE(wait_finished(p));
  REQUIRE(sink.frames().size() == frames);
  return p.stats();
}

}  // namespace eit::test
