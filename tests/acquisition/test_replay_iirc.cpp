// End to end through the replay path: iirc_data_2006.mat replayed by open_replay (the codec, the
// 16×16 → 208 MeasurementMap, ReplaySource) against a model holding EIDORS' GREIT v1.0 matrix;
// the rod in the tank turns about 11° per frame.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <numbers>
#include <vector>

#include "eit/acquisition/replay_source.hpp"
#include "eit/pipeline/frame.hpp"
#include "eit/recon/array_file.hpp"
#include "eit/recon/matrix_import.hpp"
#include "test_data.hpp"

using namespace eit::acquisition;
using namespace std::chrono_literals;

namespace {

// Polar angle (degrees) of the image's dominant blob: |value|⁴-weighted centroid of the pixels
// inside the disc that share the sign of the extreme one.
double target_angle(const std::vector<double>& img, const eit::recon::GridGeometry& g) {
  size_t k = 0;
  for (size_t i = 0; i < img.size(); ++i)
    if (!g.mask[i] && std::abs(img[i]) > std::abs(img[k])) k = i;
  double sx = 0, sy = 0;
  for (size_t i = 0; i < img.size(); ++i) {
    if (g.mask[i] || img[i] * img[k] <= 0) continue;
    const double w = std::pow(std::abs(img[i]), 4);
    sx += w * (g.x0 + double(i % size_t(g.nx)) * g.dx);
    sy += w * (g.y0 + double(i / size_t(g.nx)) * g.dy);
  }
  return std::atan2(sy, sx) * 180 / std::numbers::pi;
}

}  // namespace

TEST_CASE("replaying iirc_data_2006.mat through a GREIT model turns the target ~11° per frame") {
  const auto greit = eit::test::shared_data_file("recordings/GREIT_v10_Circ_Matrix.mat");
  const auto iirc = eit::test::shared_data_file("recordings/iirc_data_2006.mat");
  if (!greit || !iirc) return;
  if (!eit::recon::mat_reader_available()) {
    eit::test::report_skip("IIRC replay", "built without libmatio");
    return;
  }
  eit::recon::MatrixImportOptions mo;
  mo.file = *greit;
  mo.geometry = eit::recon::centred_disc_grid(32);
  const eit::recon::Model model = eit::recon::import_matrix(mo);
  const auto& grid = std::get<eit::recon::GridGeometry>(model.geometry);

  ReplayOptions ro;
  ro.unpaced = true;
  ro.recording.variable = "v_reference";
  auto reference = open_replay(*iirc, ro, model.protocol);
  ro.recording.variable = "v_rotate";
  auto replay = open_replay(*iirc, ro, model.protocol);
  REQUIRE(replay->n_values() == model.n_meas());

  std::vector<float> ref(208), v(208);
  eit::pipeline::FrameSlot slot;
  slot.values = ref.data();
  REQUIRE(reference->read(slot, 100ms) == eit::pipeline::ReadStatus::kFrame);
  slot.values = v.data();
  std::vector<double> angles;
  while (replay->read(slot, 100ms) == eit::pipeline::ReadStatus::kFrame) {
    std::vector<double> img(model.n_out(), 0.0);
    for (size_t j = 0; j < 208; ++j) {
      const double dv = double(v[j]) - double(ref[j]);
      for (size_t i = 0; i < img.size(); ++i)
        img[i] += double(model.H(Eigen::Index(i), Eigen::Index(j))) * dv;
    }
    angles.push_back(target_angle(img, grid));
  }
  REQUIRE(angles.size() == 100);
  double sum = 0;
  int same_way = 0;
  for (size_t f = 1; f < angles.size(); ++f) {
    const double step = std::remainder(angles[f] - angles[f - 1], 360.0);
    sum += step;
    same_way += step < 0;
  }
  const double mean = sum / double(angles.size() - 1);
  MESSAGE("target turns " << mean << "° per frame on average; " << same_way
                          << " of 99 steps clockwise");
  CHECK(std::abs(mean) > 9.0);
  CHECK(std::abs(mean) < 13.0);
  CHECK(same_way >= 90);
}
