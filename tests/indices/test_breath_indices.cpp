// Per-breath indices of synthetic breathing whose rate, tidal amplitude and regional delay are
// known (tests/indices/breathing_images.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "breathing_images.hpp"
#include "eit/indices/indices_engine.hpp"
#include "eit/indices/region_sums.hpp"

using namespace eit::indices;

namespace {

std::vector<BreathIndices> run(const eit::test::Breathing& b, double seconds,
                               IndicesOptions o = {}) {
  o.rate_hz = b.rate_hz;
  IndicesEngine e(BodyLayout::from_grid(b.grid()), o);
  std::vector<BreathIndices> out;
  std::vector<float> img;
  for (size_t k = 0; k < static_cast<size_t>(seconds * b.rate_hz); ++k) {
    b.frame(k, img);
    if (const auto* r = e.push(img, k, static_cast<int64_t>(k) * 20'000'000)) out.push_back(*r);
  }
  return out;
}

size_t lung_pixels(const eit::test::Breathing& b, int which) {
  size_t n = 0;
  for (size_t i = 0; i < static_cast<size_t>(b.n * b.n); ++i) n += b.lung(i) == which;
  return n;
}

}  // namespace

TEST_CASE("rate, tidal variation and tidal image of programmed breathing come back") {
  eit::test::Breathing b;
  b.breaths_per_min = 24;
  b.amplitude = 0.5;
  const auto r = run(b, 40);
  REQUIRE(r.size() >= 12);
  const double pixels = static_cast<double>(lung_pixels(b, 1) + lung_pixels(b, 2));
  for (const auto& x : r) {
    CHECK(x.rate_per_min == doctest::Approx(24).epsilon(0.03));
    CHECK(x.tiv == doctest::Approx(0.5 * pixels).epsilon(0.01));
    REQUIRE(x.pixel_data);
    for (size_t i = 0; i < x.tidal.size(); ++i) {
      if (b.lung(i)) CHECK(x.tidal[i] == doctest::Approx(0.5).epsilon(0.01));
      if (!b.lung(i) && !std::isnan(x.tidal[i])) CHECK(x.tidal[i] == 0.0);
    }
    CHECK(x.lung_pixels == static_cast<size_t>(pixels));
    CHECK(x.gi == doctest::Approx(0.0).epsilon(1e-3));
    // Equal lungs in the dorsal half, left/right symmetric about the centre.
    CHECK(x.cov_horizontal == doctest::Approx(50).epsilon(0.02));
    CHECK(x.cov_vertical > 50);
    CHECK(x.silent_dependent == 0);
    CHECK(x.silent_nondependent == 0);
  }
  // Consecutive breaths join: EELI constant, trend ~0.
  CHECK(r.back().eeli_change == doctest::Approx(0).epsilon(1e-6));
  CHECK(std::abs(r.back().eeli_trend_per_min) < 1e-6 * pixels);
}

TEST_CASE("a lagging right lung shows as regional ventilation delay of the programmed size") {
  eit::test::Breathing b;
  b.breaths_per_min = 20;  // 3 s breaths, 1.5 s inspiration
  b.right_delay_s = 0.3;
  const auto r = run(b, 40);
  REQUIRE(r.size() >= 10);
  const auto& x = r[r.size() / 2];
  double left = 0, right = 0;
  size_t nl = 0, nr = 0;
  for (size_t i = 0; i < x.rvd.size(); ++i) {
    if (std::isnan(x.rvd[i])) continue;
    if (b.lung(i) == 2) left += x.rvd[i], ++nl;
    if (b.lung(i) == 1) right += x.rvd[i], ++nr;
  }
  REQUIRE(nl > 0);
  REQUIRE(nr > 0);
  const double insp_s = x.inspiration_s;
  const double lag_pct = right / nr - left / nl;
  CHECK(lag_pct == doctest::Approx(100 * 0.3 / insp_s).epsilon(0.1));
  CHECK(x.rvd_sd == doctest::Approx(lag_pct / 2).epsilon(0.1));  // two equal halves
}

TEST_CASE("a lung that barely moves is silent space, the other carries the centre") {
  eit::test::Breathing b;
  b.right_gain = 0.05;  // right lung at 5 % of the left
  const auto r = run(b, 40);
  REQUIRE(r.size() >= 10);
  const auto& x = r.back();
  CHECK(x.cov_horizontal > 70);  // towards the patient's left
  // Lung space keeps only the left lung (5 % < 15 %), so no silent pixel inside it...
  CHECK(x.lung_pixels == lung_pixels(b, 2));
  CHECK(x.silent_dependent + x.silent_nondependent == 0);
  // ...while a lung ROI covering both lungs finds the right lung silent.
  IndicesOptions o;
  o.per_breath.lung_roi = 0;
  o.rate_hz = b.rate_hz;
  BodyLayout layout = BodyLayout::from_grid(b.grid());
  std::vector<uint8_t> both(static_cast<size_t>(b.n * b.n));
  for (size_t i = 0; i < both.size(); ++i) both[i] = b.lung(i) != 0;
  layout.add_roi("lungs", both);
  IndicesEngine e(std::move(layout), o);
  std::vector<float> img;
  const BreathIndices* last = nullptr;
  for (size_t k = 0; k < 2000; ++k) {
    b.frame(k, img);
    if (const auto* y = e.push(img, k, 0)) last = y;
  }
  REQUIRE(last);
  const double share = 100.0 * lung_pixels(b, 1) / (lung_pixels(b, 1) + lung_pixels(b, 2));
  CHECK(last->silent_dependent + last->silent_nondependent == doctest::Approx(share).epsilon(0.01));
}

TEST_CASE("region sums split the body into layers, sides and quadrants that add up") {
  eit::test::Breathing b;
  const BodyLayout layout = BodyLayout::from_grid(b.grid());
  std::vector<float> img(static_cast<size_t>(b.n * b.n));
  for (size_t i = 0; i < img.size(); ++i) img[i] = static_cast<float>(i % 7) - 2.5f;
  std::vector<double> cells(16), out(layout.n_regions());
  sum_regions(layout, img, -1.0, cells, out);
  double layers = 0;
  for (int l = 0; l < 4; ++l) layers += out[1 + l];
  CHECK(layers == doctest::Approx(out[0]));
  CHECK(out[5] + out[6] == doctest::Approx(out[0]));                     // right + left
  CHECK(out[7] + out[8] + out[9] + out[10] == doctest::Approx(out[0]));  // quadrants
  double direct = 0;
  for (uint32_t i : layout.inside_index()) direct -= img[i];
  CHECK(out[0] == doctest::Approx(direct));
  CHECK(layout.region_names()[1] == "layer_1");
}

TEST_CASE("ROI mask files are read and checked") {
  const auto path = std::filesystem::temp_directory_path() / "eit_indices_roi_test.txt";
  {
    std::ofstream f(path);
    f << "# two values\n1, 0\n";
  }
  CHECK(read_roi_mask(path, 2) == std::vector<uint8_t>{1, 0});
  CHECK_THROWS_WITH_AS(read_roi_mask(path, 3), doctest::Contains("2 mask values"),
                       std::runtime_error);
  std::filesystem::remove(path);
}
