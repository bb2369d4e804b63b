// all_finite(), the vectorised NaN/inf check of every frame's measurements and image, against
// std::isfinite at every position of buffers longer and shorter than a SIMD register; and the
// pipeline flagging a non-finite value in the last measurement or the last pixel (the positions a
// vector loop's tail handles).
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "eit/pipeline/all_finite.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "pipeline_test_support.hpp"

using namespace eit::pipeline;
using eit::test::CollectingSink;
using eit::test::random_frames;
using eit::test::random_model;
using eit::test::VectorSource;
using eit::test::wait_finished;

namespace {

bool reference_all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

// Passes the CPU backend's images on, except that frame `poisoned` gets `value` in its last pixel.
class PoisoningReconstructor final : public eit::test::ForwardingCpuBackend {
 public:
  PoisoningReconstructor(const eit::recon::Model& m, uint64_t poisoned, float value)
      : ForwardingCpuBackend(m, "poisoning"), poisoned_(poisoned), value_(value) {}
  size_t complete(std::span<FrameSlot*> out, bool wait) override {
    const size_t n = ForwardingCpuBackend::complete(out, wait);
    for (size_t i = 0; i < n; ++i)
      if (out[i]->seq == poisoned_) out[i]->image[n_out() - 1] = value_;
    return n;
  }

 private:
  uint64_t poisoned_;
  float value_;
};

}  // namespace

TEST_CASE("all_finite agrees with std::isfinite for every special value at every position") {
  const float specials[] = {
      std::numeric_limits<float>::quiet_NaN(),
      -std::numeric_limits<float>::quiet_NaN(),
      std::numeric_limits<float>::signaling_NaN(),
      std::bit_cast<float>(uint32_t{0x7f800001}),  // the NaN closest to +inf
      std::bit_cast<float>(uint32_t{0xffffffff}),  // negative NaN, every bit set
      std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity(),
  };
  // Finite values at the edges of the exponent range pass.
  const float edges[] = {std::numeric_limits<float>::max(),
                         std::numeric_limits<float>::lowest(),
                         std::numeric_limits<float>::denorm_min(),
                         -0.0f,
                         0.0f,
                         1e38f,
                         -1e-38f};
  for (size_t n = 0; n <= 70; ++n) {
    CAPTURE(n);
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = edges[i % std::size(edges)];
    CHECK(all_finite(v.data(), n));
    for (size_t pos = 0; pos < n; ++pos) {
      for (float special : specials) {
        CAPTURE(pos);
        std::vector<float> w = v;
        w[pos] = special;
        CHECK(all_finite(w.data(), n) == reference_all_finite(w));
        CHECK_FALSE(all_finite(w.data(), n));
        CHECK(all_finite(w.data(), pos));  // the values before it are fine
      }
    }
  }
}

TEST_CASE("a non-finite value in the last measurement flags exactly that frame") {
  const auto m = random_model(256);
  auto frames = random_frames(m, 30);
  const size_t last = frames[0].size() - 1;
  frames[9][last] = std::numeric_limits<float>::infinity();
  frames[10][last] = std::numeric_limits<float>::quiet_NaN();
  VectorSource source(frames);
  CollectingSink sink(m.n_out());
  Pipeline p(m, source, std::make_unique<CpuReconstructor>(m, CpuOptions{4}), {&sink});
  p.start();
  REQUIRE(wait_finished(p));
  const auto got = sink.frames();
  REQUIRE(got.size() == 30);
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    const bool bad = i == 9 || i == 10;
    CHECK(((got[i].flags & kFlagNonFinite) != 0) == bad);
    CHECK((got[i].flags & kFlagImageOverflow) == 0);
  }
  CHECK(p.stats().non_finite == 2);
}

TEST_CASE("an inf in the image's last pixel zeroes that image and flags it as an overflow") {
  const auto m = random_model(256);
  const auto frames = random_frames(m, 30);
  for (float bad_pixel :
       {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::quiet_NaN()}) {
    CAPTURE(bad_pixel);
    VectorSource source(frames);
    CollectingSink sink(m.n_out());
    Pipeline p(m, source, std::make_unique<PoisoningReconstructor>(m, 13, bad_pixel), {&sink});
    p.start();
    REQUIRE(wait_finished(p));
    const auto got = sink.frames();
    REQUIRE(got.size() == 30);
    for (size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      const bool bad = got[i].seq == 13;
      CHECK(((got[i].flags & kFlagImageOverflow) != 0) == bad);
      CHECK(((got[i].flags & kFlagNonFinite) != 0) == bad);
      const bool zero =
          std::all_of(got[i].image.begin(), got[i].image.end(), [](float x) { return x == 0; });
      CHECK(zero == bad);
    }
    CHECK(p.stats().non_finite == 1);
  }
}
