// End to end across modules: EIDORS' GREIT v1.0 matrix imported by recon, the IIRC tank recording
// read by acquisition's .mat reader in the model's measurement order.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "eit/acquisition/recording_reader.hpp"
#include "eit/recon/array_file.hpp"
#include "iirc_rotation.hpp"
#include "test_data.hpp"

using namespace eit;

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
  const recon::Model model = test::greit_v10_model(*greit);
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
    angles.push_back(test::target_angle(img, g));
  }
  const test::Rotation turn = test::rotation(angles);
  MESSAGE("target turns ", turn.mean_step, " degrees per frame; ", turn.clockwise,
          " of 99 steps clockwise");
  CHECK(std::abs(turn.mean_step) > 9.0);
  CHECK(std::abs(turn.mean_step) < 13.0);
  CHECK(turn.clockwise >= 90);
}
