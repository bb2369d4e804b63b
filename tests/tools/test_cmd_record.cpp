// `eitstream run --record/--record-raw`, replaying a raw file and `eitstream reconstruct`, driven
// through the real binary; the files are read back with the plain HDF5 C API.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include <fmt/format.h>

#include "../sinks/h5_read_support.hpp"
#include "test_data.hpp"

namespace fs = std::filesystem;
namespace h5r = eit::test::h5read;

namespace {

struct Images {
  std::vector<float> pixels;
  std::vector<uint64_t> seq;
  std::vector<hsize_t> shape;
  std::string reference, source, format;
};

Images read_images(const fs::path& path, const char* dataset = "images") {
  Images im;
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return im;
  im.pixels = h5r::dataset<float>(f, dataset, &im.shape);
  im.seq = h5r::dataset<uint64_t>(f, "seq");
  im.reference = h5r::attr_string(f, "reference");
  im.source = h5r::attr_string(f, "source");
  im.format = h5r::attr_string(f, "format");
  H5Fclose(f);
  return im;
}

int sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

fs::path work_dir(const char* name) {
  const fs::path d = fs::temp_directory_path() / fmt::format("eit_{}_{}", name, ::getpid());
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("run records images and raw frames, reconstruct of the raw file gives the same images") {
  const fs::path d = work_dir("record");
  const std::string bin = EITSTREAM_BIN;
  REQUIRE(
      sh(fmt::format("{} run --frames 240 --fps 0 --policy lossless --endpoint "
                     "'tcp://127.0.0.1:*' --quiet --record {} --record-raw {} --record-chunk 50",
                     bin, (d / "live.h5").string(), (d / "raw.h5").string())) == 0);
  const Images live = read_images(d / "live.h5");
  REQUIRE(live.shape == std::vector<hsize_t>{240, 1024});
  for (size_t i = 0; i < live.seq.size(); ++i) CHECK(live.seq[i] == i);
  CHECK(live.format == "eitstream-images");
  CHECK(live.reference.starts_with("phantom"));
  const Images raw = read_images(d / "raw.h5", "frames");
  CHECK(raw.shape == std::vector<hsize_t>{240, 208});
  CHECK(raw.format == "eitstream-frames");

  // Offline: the stored reference is the default, so the images come out again.
  REQUIRE(sh(fmt::format("{} reconstruct {} -o {} --batch 64 --quiet", bin, (d / "raw.h5").string(),
                         (d / "again.h5").string())) == 0);
  const Images again = read_images(d / "again.h5");
  REQUIRE(again.shape == live.shape);
  CHECK(again.seq == live.seq);
  CHECK(again.reference.starts_with("variable:v_ref"));
  CHECK(again.source.starts_with("raw.h5 fnv1a64:"));
  // Same float32 products; the live run's batches vary in size (GEMV for one frame, GEMM for
  // several), so allow last-bit differences relative to the image scale.
  float scale = 0, worst = 0;
  for (size_t i = 0; i < live.pixels.size(); ++i) {
    scale = std::max(scale, std::abs(live.pixels[i]));
    worst = std::max(worst, std::abs(live.pixels[i] - again.pixels[i]));
  }
  MESSAGE(fmt::format("largest difference {:.3g} of image scale {:.3g}", worst, scale));
  CHECK(scale > 0);
  CHECK(worst <= 1e-5f * scale);

  // Replayed through run: a raw file is a recording like the others.
  REQUIRE(sh(fmt::format("{} run --source {} --fps 0 --policy lossless --endpoint "
                         "'tcp://127.0.0.1:*' --quiet --record {}",
                         bin, (d / "raw.h5").string(), (d / "replayed.h5").string())) == 0);
  const Images replayed = read_images(d / "replayed.h5");
  REQUIRE(replayed.shape == live.shape);
  CHECK(replayed.seq == live.seq);
  float worst_replay = 0;
  for (size_t i = 0; i < live.pixels.size(); ++i)
    worst_replay = std::max(worst_replay, std::abs(live.pixels[i] - replayed.pixels[i]));
  CHECK(worst_replay <= 1e-5f * scale);
  fs::remove_all(d);
}

TEST_CASE("run takes the recording options it documents (a raw .f32 file with its value count)") {
  const fs::path d = work_dir("f32");
  const std::string bin = EITSTREAM_BIN;
  // Eleven frames of 208 values, frame k = 1 + k/100 everywhere.
  {
    std::FILE* f = std::fopen((d / "rec.f32").c_str(), "wb");
    for (int k = 0; k < 11; ++k)
      for (int i = 0; i < 208; ++i) {
        const float v = 1.0f + static_cast<float>(k) / 100.0f;
        std::fwrite(&v, sizeof v, 1, f);
      }
    std::fclose(f);
  }
  CHECK(sh(fmt::format("{} run --source {} --fps 0 --endpoint 'tcp://127.0.0.1:*' --quiet", bin,
                       (d / "rec.f32").string())) != 0);  // no --values-per-frame
  CHECK(sh(fmt::format("{} run --source {} --values-per-frame 208 --layout model --speed 4 "
                       "--fps 100 --reference frame:0 --endpoint 'tcp://127.0.0.1:*' --quiet "
                       "--record {}",
                       bin, (d / "rec.f32").string(), (d / "img.h5").string())) == 0);
  const Images im = read_images(d / "img.h5");
  REQUIRE(im.shape == std::vector<hsize_t>{11, 1024});
  CHECK(im.reference == "frame:0 (frame 0)");
  // Frame 0 is the reference: its image is zero; later frames are not.
  float first = 0, last = 0;
  for (size_t p = 0; p < 1024; ++p) {
    first = std::max(first, std::abs(im.pixels[p]));
    last = std::max(last, std::abs(im.pixels[10 * 1024 + p]));
  }
  CHECK(first == 0.0f);
  CHECK(last > 0.0f);
  CHECK(sh(fmt::format("{} reconstruct {} --values-per-frame 208 --reference bogus -o {}", bin,
                       (d / "rec.f32").string(), (d / "x.h5").string())) != 0);
  fs::remove_all(d);
}
