// End to end across modules: EIDORS' GREIT v1.0 matrix imported by recon, the IIRC tank recording
// read by acquisition's .mat reader in the model's measurement order.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "eit/acquisition/recording_reader.hpp"
#include "eit/recon/array_file.hpp"
#include "eit/recon/matrix_import.hpp"
#include "test_data.hpp"

using namespace eit;

namespace {

// Polar angle (degrees) of the image's dominant blob: centroid of |value|^4 over the in-body
// pixels sharing the sign of the extreme one.
double target_angle(const std::vector<double>& img, const recon::GridGeometry& g) {
  size_t k = 0;
  for (size_t i = 0; i < img.size(); ++i)
    if (!g.mask[i] && std::abs(img[i]) > std::abs(img[k])) k = i;
  double sx = 0, sy = 0;
  for (size_t i = 0; i < img.size(); ++i) {
    if (g.mask[i] || img[i] * img[k] <= 0) continue;
    const double w = std::pow(std::abs(img[i]), 4);
    sx += w * (g.x0 + static_cast<double>(i % static_cast<size_t>(g.nx)) * g.dx);
    sy += w * (g.y0 + static_cast<double>(i / static_cast<size_t>(g.nx)) * g.dy);
  }
  return std::atan2(sy, sx) * 180 / std::numbers::pi;
}

}  // namespace

TEST_CASE(
    "imported GREIT v1.0 matrix applied to iirc_data_2006.mat (recording reader) turns the target "
    "~10-11° per frame") {
  const auto greit = test::shared_data_file("recordings/GREIT_v10_Circ_Matrix.mat");
  const auto iirc = test::shared_data_file("recordings/iirc_data_2006.mat");
  if (!greit || !iirc) return;
  if (!recon::mat_reader_available()) {
    test::report_skip("GREIT replay", "built without libmatio");
    return;
  }
  recon::MatrixImportOptions o;
  o.file = *greit;
  o.geometry = recon::centred_disc_grid(32);
  const recon::Model model = recon::import_matrix(o);
  const auto& g = std::get<recon::GridGeometry>(model.geometry);

  auto frames = acquisition::open_recording_reader(*iirc, {}, model.protocol);
  acquisition::RecordingOptions ro;
  ro.variable = "v_reference";
  auto reference = acquisition::open_recording_reader(*iirc, ro, model.protocol);
  REQUIRE(frames->info().n_frames == 100);
  std::vector<float> v(208), v_ref(208);
  REQUIRE(reference->read(0, v_ref));
  std::vector<double> angles, img(1024);
  for (size_t f = 0; f < frames->info().n_frames; ++f) {
    REQUIRE(frames->read(f, v));
    for (Eigen::Index r = 0; r < 1024; ++r) {
      double s = 0;
      for (Eigen::Index c = 0; c < 208; ++c) s += model.H(r, c) * (double{v[c]} - v_ref[c]);
      img[static_cast<size_t>(r)] = s;
    }
    angles.push_back(target_angle(img, g));
  }
  double sum = 0;
  int clockwise = 0;
  for (size_t f = 1; f < angles.size(); ++f) {
    const double step = std::remainder(angles[f] - angles[f - 1], 360.0);
    sum += step;
    clockwise += step < 0;
  }
  const double mean = sum / static_cast<double>(angles.size() - 1);
  MESSAGE("target turns ", mean, " degrees per frame; ", clockwise, " of 99 steps clockwise");
  CHECK(std::abs(mean) > 9.0);
  CHECK(std::abs(mean) < 13.0);
  CHECK(clockwise >= 90);
}
