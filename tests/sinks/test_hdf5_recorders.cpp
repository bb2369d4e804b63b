#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "../pipeline/pipeline_test_support.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/sinks/hdf5_frame_recorder.hpp"
#include "eit/sinks/hdf5_image_recorder.hpp"
#include "h5_read_support.hpp"

using namespace eit;
using eit::test::CollectingSink;
using eit::test::random_frames;
using eit::test::random_model;
using eit::test::VectorSource;
namespace h5r = eit::test::h5read;
namespace fs = std::filesystem;

namespace {

fs::path temp_file(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_rec_{}", ::getpid());
  fs::create_directories(dir);
  return dir / name;
}

}  // namespace

TEST_CASE("image and raw-frame recorders keep every frame of a pipeline run, in order") {
  const recon::Model model = random_model(1024);
  const auto frames = random_frames(model, 301);
  VectorSource source(frames);
  CollectingSink collect(model.n_out());
  const fs::path images = temp_file("images.h5"), raw = temp_file("frames.h5");
  sinks::Hdf5RecorderOptions o;
  o.stream = "bed7";
  o.reference = "model";
  o.source = "test vector source";
  o.chunk_frames = 32;  // 301 frames: 9 whole chunks and a partial one written at end()
  o.deflate = 1;
  sinks::Hdf5ImageRecorder image_rec(images, model, o);
  o.deflate = 0;
  o.reference_values.assign(model.v_ref.data(), model.v_ref.data() + model.v_ref.size());
  sinks::Hdf5FrameRecorder frame_rec(raw, model, o);
  CHECK(image_rec.policy() == pipeline::SinkPolicy::kBlock);

  pipeline::PipelineOptions po;
  po.policy = pipeline::Policy::kLossless;
  pipeline::Pipeline pipe(model, source, std::make_unique<pipeline::CpuReconstructor>(model),
                          {&collect, &image_rec, &frame_rec}, po);
  pipe.start();
  pipe.wait();
  const auto published = collect.frames();
  REQUIRE(published.size() == frames.size());
  CHECK(image_rec.stats().sent == frames.size());
  CHECK(image_rec.stats().errors == 0);

  const hid_t f = H5Fopen(images.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  std::vector<hsize_t> shape;
  const auto img = h5r::dataset<float>(f, "images", &shape);
  REQUIRE(shape == std::vector<hsize_t>{frames.size(), model.n_out()});
  const auto seq = h5r::dataset<uint64_t>(f, "seq");
  const auto t_pub = h5r::dataset<int64_t>(f, "t_published_ns");
  const auto t_acq = h5r::dataset<int64_t>(f, "t_acquired_ns");
  REQUIRE(seq.size() == frames.size());
  size_t mismatched = 0;
  for (size_t i = 0; i < published.size(); ++i) {
    CHECK(seq[i] == i);
    CHECK(t_acq[i] <= t_pub[i]);
    if (!std::equal(published[i].image.begin(), published[i].image.end(),
                    img.begin() + static_cast<ptrdiff_t>(i * model.n_out())))
      ++mismatched;
  }
  CHECK(mismatched == 0);
  CHECK(h5r::dataset<uint32_t>(f, "flags").size() == frames.size());
  CHECK(h5r::dataset<uint32_t>(f, "dropped_before").size() == frames.size());
  CHECK(h5r::attr_string(f, "format") == "eitstream-images");
  CHECK(h5r::attr_string(f, "model_id") == model.id);
  CHECK(h5r::attr_string(f, "stream") == "bed7");
  CHECK(h5r::attr_string(f, "reference") == "model");
  const hid_t g = H5Gopen2(f, "geometry", H5P_DEFAULT);
  CHECK(h5r::attr_string(g, "kind") == "grid");
  CHECK(h5r::attr_double(g, "dx") == doctest::Approx(2.0 / 32));
  H5Gclose(g);
  CHECK(h5r::dataset<uint8_t>(f, "geometry/mask").size() == model.n_out());
  CHECK(h5r::dataset<double>(f, "protocol/measurements").size() == 3 * model.n_meas());
  H5Fclose(f);

  const hid_t r = H5Fopen(raw.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(r >= 0);
  const auto values = h5r::dataset<float>(r, "frames", &shape);
  REQUIRE(shape == std::vector<hsize_t>{frames.size(), model.n_meas()});
  for (size_t i = 0; i < frames.size(); ++i)
    CHECK(std::equal(frames[i].begin(), frames[i].end(),
                     values.begin() + static_cast<ptrdiff_t>(i * model.n_meas())));
  const auto v_ref = h5r::dataset<double>(r, "v_ref");
  REQUIRE(v_ref.size() == model.n_meas());
  CHECK(v_ref[5] == model.v_ref[5]);
  CHECK(h5r::attr_string(r, "format") == "eitstream-frames");
  H5Fclose(r);
  fs::remove(images);
  fs::remove(raw);
}

TEST_CASE("an image file being written is readable in SWMR mode, whole chunks at a time") {
  if (std::system("python3 -c 'import h5py' 2>/dev/null") != 0) {
    MESSAGE("skipped: python3 with h5py not found (needed as an independent SWMR reader)");
    return;
  }
  const recon::Model model = random_model(64);
  const fs::path path = temp_file("swmr.h5");
  sinks::Hdf5RecorderOptions o;
  o.chunk_frames = 10;
  sinks::Hdf5ImageRecorder rec(path, model, o);
  std::vector<float> values(model.n_meas()), image(model.n_out());
  pipeline::FrameSlot slot;
  slot.values = values.data();
  slot.image = image.data();
  for (uint64_t i = 0; i < 25; ++i) {  // two whole chunks on disk, five frames buffered
    slot.seq = 100 + i;
    std::fill(image.begin(), image.end(), static_cast<float>(i));
    rec.publish(slot);
  }
  const std::string script = fmt::format(
      "import h5py,sys\n"
      "f=h5py.File('{}','r',libver='latest',swmr=True)\n"
      "n=f['images'].shape[0]; s=f['seq'][:n]\n"
      "ok=n==20 and list(s)==list(range(100,120)) and f['images'][19,3]==19.0\n"
      "sys.exit(0 if ok else 1)\n",
      path.string());
  const fs::path py = temp_file("swmr_read.py");
  std::FILE* out = std::fopen(py.c_str(), "w");
  std::fputs(script.c_str(), out);
  std::fclose(out);
  CHECK(std::system(fmt::format("python3 {}", py.string()).c_str()) == 0);
  rec.tick(std::numeric_limits<int64_t>::max() / 2);  // the flush interval has passed
  const std::string again = fmt::format(
      "import h5py,sys\n"
      "f=h5py.File('{}','r',libver='latest',swmr=True)\n"
      "sys.exit(0 if f['images'].shape[0]==25 and f['seq'][24]==124 else 1)\n",
      path.string());
  out = std::fopen(py.c_str(), "w");
  std::fputs(again.c_str(), out);
  std::fclose(out);
  CHECK(std::system(fmt::format("python3 {}", py.string()).c_str()) == 0);
  rec.end();
  fs::remove(path);
  fs::remove(py);
}

// Whole chunks go to the file by direct chunk write (no filter) or through the chunk cache
// (deflate), flushed per chunk or only at tick(); partial flushes from tick() come in between,
// after which the writer fills only up to the next chunk boundary. Every row must land where its
// seq says, with its own values, in every case.
TEST_CASE("rows survive partial flushes between whole chunks, with and without compression") {
  const recon::Model model = random_model(16);
  for (const int variant : {0, 1, 2}) {
    const int deflate = variant == 1 ? 3 : 0;
    const bool flush_each_chunk = variant != 2;  // reconstruct's setting: flushed at tick only
    CAPTURE(deflate);
    CAPTURE(flush_each_chunk);
    const fs::path path = temp_file(fmt::format("partial_{}.h5", variant));
    sinks::Hdf5RecorderOptions o;
    o.chunk_frames = 8;
    o.deflate = deflate;
    o.flush_each_chunk = flush_each_chunk;
    o.flush_interval_ns = 1;
    std::vector<float> values(model.n_meas()), image(model.n_out());
    pipeline::FrameSlot slot;
    slot.values = values.data();
    slot.image = image.data();
    constexpr uint64_t kRows = 61;
    {
      sinks::Hdf5ImageRecorder rec(path, model, o);
      int64_t now = 0;
      for (uint64_t i = 0; i < kRows; ++i) {
        slot.seq = 1000 + i;
        for (size_t k = 0; k < image.size(); ++k) image[k] = float(i) + float(k) * 1e-3f;
        rec.publish(slot);
        if (i == 4 || i == 13 || i == 14 || i == 40) rec.tick(now += 10);  // partial flushes
      }
      rec.end();
      CHECK(rec.stats().errors == 0);
    }
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    std::vector<hsize_t> shape;
    const auto px = h5r::dataset<float>(f, "images", &shape);
    const auto seq = h5r::dataset<uint64_t>(f, "seq");
    H5Fclose(f);
    REQUIRE(shape == std::vector<hsize_t>{kRows, model.n_out()});
    REQUIRE(seq.size() == kRows);
    size_t wrong = 0;
    for (uint64_t i = 0; i < kRows; ++i) {
      wrong += seq[i] != 1000 + i;
      for (size_t k = 0; k < model.n_out(); ++k)
        wrong += px[i * model.n_out() + k] != float(i) + float(k) * 1e-3f;
    }
    CHECK(wrong == 0);
    fs::remove(path);
  }
}

// reconstruct's setting: whole chunks are not flushed as they are written; tick() must then
// flush them (here with nothing left in the buffer: 30 rows are three whole chunks of 10).
TEST_CASE("with flush_each_chunk off, a SWMR reader sees whole chunks after tick()") {
  if (std::system("python3 -c 'import h5py' 2>/dev/null") != 0) {
    MESSAGE("skipped: python3 with h5py not found (needed as an independent SWMR reader)");
    return;
  }
  const recon::Model model = random_model(64);
  const fs::path path = temp_file("swmr_tick.h5");
  sinks::Hdf5RecorderOptions o;
  o.chunk_frames = 10;
  o.flush_each_chunk = false;
  sinks::Hdf5ImageRecorder rec(path, model, o);
  std::vector<float> values(model.n_meas()), image(model.n_out());
  pipeline::FrameSlot slot;
  slot.values = values.data();
  slot.image = image.data();
  for (uint64_t i = 0; i < 30; ++i) {
    slot.seq = 100 + i;
    std::fill(image.begin(), image.end(), static_cast<float>(i));
    rec.publish(slot);
  }
  rec.tick(std::numeric_limits<int64_t>::max() / 2);  // the flush interval has passed
  const fs::path py = temp_file("swmr_tick.py");
  std::FILE* out = std::fopen(py.c_str(), "w");
  std::fputs(fmt::format("import h5py,sys\n"
                         "f=h5py.File('{}','r',libver='latest',swmr=True)\n"
                         "n=f['images'].shape[0]; s=f['seq'][:n]\n"
                         "ok=n==30 and list(s)==list(range(100,130)) and f['images'][29,3]==29.0\n"
                         "sys.exit(0 if ok else 1)\n",
                         path.string())
                 .c_str(),
             out);
  std::fclose(out);
  CHECK(std::system(fmt::format("python3 {}", py.string()).c_str()) == 0);
  rec.end();
  fs::remove(path);
  fs::remove(py);
}
