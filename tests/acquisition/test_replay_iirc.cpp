// End to end through the replay path: iirc_data_2006.mat replayed by open_replay (the codec, the
// 16×16 → 208 MeasurementMap, ReplaySource) against a model holding EIDORS' GREIT v1.0 matrix;
// the rod in the tank turns about 11° per frame.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <vector>

#include "eit/acquisition/replay_source.hpp"
#include "eit/pipeline/frame.hpp"
#include "eit/recon/array_file.hpp"
#include "iirc_rotation.hpp"
#include "test_data.hpp"

using namespace eit::acquisition;
using namespace std::chrono_literals;

TEST_CASE("replaying iirc_data_2006.mat through a GREIT model turns the target ~11° per frame") {
  const auto greit = eit::test::shared_data_file("recordings/GREIT_v10_Circ_Matrix.mat");
  const auto iirc = eit::test::shared_data_file("recordings/iirc_data_2006.mat");
  if (!greit || !iirc) return;
  if (!eit::recon::mat_reader_available()) {
    eit::test::report_skip("IIRC replay", "built without libmatio");
    return;
  }
  const eit::recon::Model model = eit::test::greit_v10_model(*greit);
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
    angles.push_back(eit::test::target_angle(img, grid));
  }
  REQUIRE(angles.size() == 100);
  const eit::test::Rotation turn = eit::test::rotation(angles);
  MESSAGE("target turns " << turn.mean_step << "° per frame on average; " << turn.clockwise
                          << " of 99 steps clockwise");
  CHECK(std::abs(turn.mean_step) > 9.0);
  CHECK(std::abs(turn.mean_step) < 13.0);
  CHECK(turn.clockwise >= 90);
}
