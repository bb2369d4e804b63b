// The HDF5 recorders when the disk cannot take the recording: an existing file is never
// replaced unasked, and a disk running out of room stops the recording before HDF5 fails, so the
// file keeps whole rows and stays readable. (A write that fails outright, beyond what the check
// foresees, is tested through the CLI in tests/tools/test_cmd_record.cpp: libhdf5 cannot finish
// such a file, which only a process of its own may leave behind.)
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

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

fs::path fresh_file(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_diskfull_{}", ::getpid());
  fs::create_directories(dir);
  fs::remove(dir / name);
  return dir / name;
}

}  // namespace

TEST_CASE("an existing file is not replaced by a recorder unless asked, and is then") {
  const recon::Model model = random_model(64);
  const fs::path path = fresh_file("exists.h5");
  std::ofstream(path) << "an earlier recording";
  sinks::Hdf5RecorderOptions o;
  for (const bool raw : {false, true}) {
    CAPTURE(raw);
    try {
      if (raw)
        sinks::Hdf5FrameRecorder rec(path, model, o);
      else
        sinks::Hdf5ImageRecorder rec(path, model, o);
      FAIL("an existing file was replaced");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) ==
            path.string() +
                ": the file exists; not replaced (an earlier recording, or another "
                "run's)");
    }
    CHECK(fs::file_size(path) == std::string("an earlier recording").size());
  }
  o.replace_existing = true;
  { sinks::Hdf5ImageRecorder rec(path, model, o); }
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  CHECK(h5r::attr_string(f, "format") == "eitstream-images");
  H5Fclose(f);
}

TEST_CASE("a disk running out of room stops the recording whole: every row kept is complete") {
  const recon::Model model = random_model(1024);
  const auto frames = random_frames(model, 301);
  VectorSource source(frames);
  CollectingSink collect(model.n_out());
  const fs::path path = fresh_file("full.h5");
  sinks::Hdf5RecorderOptions o;
  o.chunk_frames = 32;
  o.min_free_bytes = 1 << 20;
  // Room for three chunk writes, then 100 KiB free: the fourth write would leave less than 1 MiB.
  std::atomic<int> probes{0};
  o.free_bytes = [&] { return ++probes <= 3 ? uint64_t{1} << 40 : uint64_t{100} << 10; };
  sinks::Hdf5ImageRecorder rec(path, model, o);

  pipeline::PipelineOptions po;
  po.policy = pipeline::Policy::kLossless;
  pipeline::Pipeline pipe(model, source, std::make_unique<pipeline::CpuReconstructor>(model),
                          {&collect, &rec}, po);
  pipe.start();
  pipe.wait();
  const auto published = collect.frames();
  REQUIRE(published.size() == frames.size());  // the stream went on without the file

  const size_t kept = 3 * 32;
  CHECK(rec.failure() ==
        fmt::format("stopped before the disk was full after {} rows: the disk has 0.1 MiB free, "
                    "and the recorder keeps 1.0 MiB free; nothing more is written to it",
                    kept));
  CHECK(rec.stats().sent == kept);
  CHECK(rec.stats().dropped == frames.size() - kept);
  CHECK(rec.stats().errors == 1);

  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  std::vector<hsize_t> shape;
  const auto img = h5r::dataset<float>(f, "images", &shape);
  REQUIRE(shape == std::vector<hsize_t>{kept, model.n_out()});
  const auto seq = h5r::dataset<uint64_t>(f, "seq");
  REQUIRE(seq.size() == kept);
  CHECK(h5r::dataset<int64_t>(f, "t_acquired_ns").size() == kept);
  CHECK(h5r::dataset<uint32_t>(f, "flags").size() == kept);
  size_t mismatched = 0;
  for (size_t i = 0; i < kept; ++i) {
    CHECK(seq[i] == published[i].seq);
    if (!std::equal(published[i].image.begin(), published[i].image.end(),
                    img.begin() + static_cast<ptrdiff_t>(i * model.n_out())))
      ++mismatched;
  }
  CHECK(mismatched == 0);
  H5Fclose(f);
}
