// The clinical indices written into the image recorder's file (/indices, docs/formats.md): the
// rows read back from the file equal what an IndicesEngine computes from the same images, one
// per image, with the breaths' table and tidal images.
#include <doctest/doctest.h>
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "breathing_images.hpp"
#include "eit/indices/hdf5_indices_annex.hpp"
#include "eit/pipeline/frame.hpp"
#include "eit/recon/default_model.hpp"
#include "eit/sinks/hdf5_image_recorder.hpp"

using namespace eit;

namespace {

struct Read {
  std::vector<hsize_t> dims;
  std::vector<double> values;
};

Read read_doubles(hid_t file, const char* name) {
  Read r;
  const hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  REQUIRE(d >= 0);
  const hid_t space = H5Dget_space(d);
  r.dims.resize(static_cast<size_t>(H5Sget_simple_extent_ndims(space)));
  H5Sget_simple_extent_dims(space, r.dims.data(), nullptr);
  size_t n = 1;
  for (auto x : r.dims) n *= x;
  r.values.resize(n);
  if (n)
    REQUIRE(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, r.values.data()) >= 0);
  H5Sclose(space);
  H5Dclose(d);
  return r;
}

}  // namespace

TEST_CASE("indices annex: /indices in the image file equals the engine's own results") {
  const auto model = recon::default_model();
  test::Breathing b;
  b.breaths_per_min = 30;
  b.amplitude = 0.4;
  b.right_delay_s = 0.2;
  REQUIRE(model.n_out() == static_cast<size_t>(b.n * b.n));
  indices::IndicesOptions o;
  o.rate_hz = b.rate_hz;
  // The reference run, and the annex's own engine (moved in: it must keep working after a move).
  indices::IndicesEngine reference(indices::BodyLayout::from_model(model), o);
  auto annex = std::make_unique<indices::Hdf5IndicesAnnex>(
      indices::IndicesEngine(indices::BodyLayout::from_model(model), o), 32);

  const auto path = std::filesystem::temp_directory_path() / "eit_test_indices_annex.h5";
  std::filesystem::remove(path);
  sinks::Hdf5RecorderOptions ro;
  ro.frame_rate_hz = b.rate_hz;
  ro.chunk_frames = 16;
  std::vector<indices::BreathIndices> expected;
  constexpr size_t kFrames = 50 * 20;  // 20 s: 10 breaths
  {
    sinks::Hdf5ImageRecorder recorder(path, model, ro, std::move(annex));
    std::vector<float> image;
    for (size_t k = 0; k < kFrames; ++k) {
      b.frame(k, image);
      pipeline::FrameSlot slot;
      slot.seq = 1000 + k;
      slot.image = image.data();
      slot.stamp(pipeline::Stage::kReceived, static_cast<int64_t>(k) * 20'000'000);
      recorder.publish(slot);
      if (const auto* r = reference.push(image, slot.seq, slot.stamp(pipeline::Stage::kReceived)))
        expected.push_back(*r);
      if (k % 100 == 0) recorder.tick(static_cast<int64_t>(k) * 20'000'000 + 2'000'000'000);
    }
    recorder.end();
    while (const auto* r = reference.finish()) expected.push_back(*r);
    CHECK(recorder.stats().errors == 0);
  }
  REQUIRE(expected.size() >= 8);

  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const auto seq = read_doubles(file, "/indices/seq");
  REQUIRE(seq.dims == std::vector<hsize_t>{kFrames});
  for (size_t k = 0; k < kFrames; ++k) CHECK(seq.values[k] == 1000.0 + k);
  const auto regions = read_doubles(file, "/indices/regions");
  REQUIRE(regions.dims.size() == 2);
  CHECK(regions.dims[0] == kFrames);
  CHECK(regions.dims[1] == reference.layout().n_regions());
  const size_t nr = regions.dims[1];
  // The last frame's sums equal the reference engine's (same images, same arithmetic).
  for (size_t j = 0; j < nr; ++j)
    CHECK(regions.values[(kFrames - 1) * nr + j] == reference.regions()[j]);

  const auto breaths = read_doubles(file, "/indices/breaths");
  REQUIRE(breaths.dims.size() == 2);
  REQUIRE(breaths.dims[0] == expected.size());
  REQUIRE(breaths.dims[1] == indices::kBreathColumns.size());
  auto col = [&](size_t row, std::string_view name) {
    for (size_t c = 0; c < indices::kBreathColumns.size(); ++c)
      if (indices::kBreathColumns[c] == name) return breaths.values[row * breaths.dims[1] + c];
    FAIL("no column ", std::string(name));
    return 0.0;
  };
  const auto tidal = read_doubles(file, "/indices/tidal");
  REQUIRE(tidal.dims == std::vector<hsize_t>{expected.size(), model.n_out()});
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& e = expected[i];
    CHECK(col(i, "number") == static_cast<double>(e.number));
    CHECK(col(i, "start_seq") == static_cast<double>(e.start_seq));
    CHECK(col(i, "end_frame") == static_cast<double>(e.end));
    CHECK(col(i, "rate_per_min") == e.rate_per_min);
    CHECK(col(i, "tiv") == e.tiv);
    CHECK(col(i, "eeli") == e.eeli);
    REQUIRE(e.pixel_data);
    CHECK(col(i, "pixel_data") == 1.0);
    CHECK(col(i, "gi") == e.gi);
    CHECK(col(i, "cov_vertical_pct") == e.cov_vertical);
    CHECK(col(i, "rvd_index_pct") == e.rvd_sd);
    CHECK(col(i, "lung_pixels") == static_cast<double>(e.lung_pixels));
    size_t lung = 0;
    for (size_t p = 0; p < model.n_out(); ++p) {
      const double t = tidal.values[i * model.n_out() + p];
      if (std::isnan(e.tidal[p])) {
        CHECK(std::isnan(t));
      } else {
        CHECK(t == doctest::Approx(e.tidal[p]).epsilon(1e-6));  // stored as float32
        lung += b.lung(p) != 0 && t > 0.2;
      }
    }
    CHECK(lung > 0);
  }
  // The programmed breathing: 30 breaths/min.
  for (size_t i = 1; i + 1 < expected.size(); ++i)
    CHECK(col(i, "rate_per_min") == doctest::Approx(30).epsilon(0.05));

  // Group attributes and names.
  const hid_t g = H5Gopen2(file, "/indices", H5P_DEFAULT);
  REQUIRE(g >= 0);
  double rate = 0;
  const hid_t a = H5Aopen(g, "frame_rate_hz", H5P_DEFAULT);
  REQUIRE(a >= 0);
  H5Aread(a, H5T_NATIVE_DOUBLE, &rate);
  CHECK(rate == 50.0);
  H5Aclose(a);
  CHECK(H5Lexists(g, "region_names", H5P_DEFAULT) > 0);
  CHECK(H5Lexists(g, "breath_columns", H5P_DEFAULT) > 0);
  H5Gclose(g);
  H5Fclose(file);
  std::filesystem::remove(path);
}
