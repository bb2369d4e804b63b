// The synthetic phantom's values, recomputed here from the table as the header defines them:
// linear interpolation between the two nearest rows in double, Gaussian noise (std::mt19937_64
// seeded with the seed, one std::normal_distribution draw per value in measurement order) added
// in double, then one cast to float. Exact equality: read() may reorganise its memory, never its
// arithmetic. The widths are not multiples of a SIMD register, so vector loop tails are covered.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/pipeline/frame.hpp"

namespace {

using eit::acquisition::PhantomOptions;
using eit::acquisition::PhantomTable;
using eit::acquisition::SyntheticPhantomSource;
using eit::pipeline::ReadStatus;

PhantomTable random_table(Eigen::Index rows, Eigen::Index cols) {
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> u(-2.0, 3.0);
  PhantomTable t;
  t.frames = Eigen::MatrixXd(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index c = 0; c < cols; ++c) t.frames(r, c) = u(g);
  t.homogeneous = Eigen::VectorXd::Constant(cols, 1.5);
  return t;
}

// Frame `seq`'s values, computed from the definition (unpaced: frames_per_revolution per turn).
std::vector<float> expected_frame(const PhantomTable& t, const PhantomOptions& o, uint64_t seq,
                                  double sigma, std::mt19937_64& rng,
                                  std::normal_distribution<double>& normal) {
  const auto k = t.frames.rows();
  const double turns = static_cast<double>(seq) / static_cast<double>(o.frames_per_revolution);
  const double p = (turns - std::floor(turns)) * static_cast<double>(k);
  const auto k0 = std::min<Eigen::Index>(static_cast<Eigen::Index>(p), k - 1);
  const auto k1 = (k0 + 1) % k;
  const double a = p - static_cast<double>(k0);
  std::vector<float> out(static_cast<size_t>(t.frames.cols()));
  for (Eigen::Index i = 0; i < t.frames.cols(); ++i) {
    double v = (1 - a) * t.frames(k0, i) + a * t.frames(k1, i);
    if (sigma > 0) v += sigma * normal(rng);
    out[static_cast<size_t>(i)] = static_cast<float>(v);
  }
  return out;
}

void check_frames(Eigen::Index cols, double snr_db) {
  const PhantomTable table = random_table(5, cols);
  PhantomOptions o;
  o.rate_hz = 0;
  o.frames_per_revolution = 13;  // positions fall between rows, and wrap from the last to the first
  o.snr_db = snr_db;
  o.seed = 3;
  SyntheticPhantomSource source(table, o);
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<float> values(static_cast<size_t>(cols), std::numeric_limits<float>::quiet_NaN());
  eit::pipeline::FrameSlot slot;
  slot.values = values.data();
  for (uint64_t seq = 0; seq < 40; ++seq) {
    CAPTURE(seq);
    REQUIRE(source.read(slot, std::chrono::milliseconds(100)) == ReadStatus::kFrame);
    CHECK(slot.seq == seq);
    const auto want = expected_frame(table, o, seq, source.noise_sigma(), rng, normal);
    size_t differ = 0;
    for (size_t i = 0; i < want.size(); ++i) differ += values[i] != want[i];
    CHECK(differ == 0);
  }
}

}  // namespace

TEST_CASE("synthetic phantom: noiseless values are the table's interpolation, bit for bit") {
  for (Eigen::Index cols : {1, 7, 37, 208}) {
    CAPTURE(cols);
    check_frames(cols, std::numeric_limits<double>::infinity());
  }
}

TEST_CASE("synthetic phantom: noisy values add one normal draw per value in order, bit for bit") {
  for (Eigen::Index cols : {1, 37, 208}) {
    CAPTURE(cols);
    check_frames(cols, 40);
  }
}
