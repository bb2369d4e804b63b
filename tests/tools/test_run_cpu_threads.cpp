// `eitstream run --cpu-threads N`: the CPU backend splits each batch by rows of H over N threads.
// The same frames (a raw file recorded by a one-thread run, replayed) give the same images with
// 3 threads, the run says it used 3, and 0 threads is refused naming the option.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>

#include "../sinks/h5_read_support.hpp"
#include "file_text.hpp"

namespace fs = std::filesystem;
using eit::test::file_text;
namespace h5r = eit::test::h5read;

namespace {

std::vector<float> read_pixels(const fs::path& path, std::vector<hsize_t>& shape) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return {};
  std::vector<float> px = h5r::dataset<float>(f, "images", &shape);
  H5Fclose(f);
  return px;
}

// Runs `cmd`, returns its exit status; stdout and stderr end up in `log`.
int run_logged(const std::string& cmd, const fs::path& log) {
  return std::system(fmt::format("{} >{} 2>&1", cmd, log.string()).c_str());
}

}  // namespace

TEST_CASE("run --cpu-threads 3 gives the single-thread images and says it used 3 threads") {
  const fs::path d = fs::temp_directory_path() / fmt::format("eit_cpu_threads_{}", ::getpid());
  fs::create_directories(d);
  const std::string bin = EITSTREAM_BIN;
  const std::string common =
      "--fps 0 --policy lossless --backend cpu --max-batch 16 --endpoint 'tcp://127.0.0.1:*' "
      "--quiet";
  REQUIRE(run_logged(fmt::format("{} run --frames 300 {} --cpu-threads 1 --record {} "
                                 "--record-raw {}",
                                 bin, common, (d / "one.h5").string(), (d / "raw.h5").string()),
                     d / "one.log") == 0);
  CHECK(file_text(d / "one.log").find("cpu (Eigen, 1 thread)") != std::string::npos);
  REQUIRE(run_logged(fmt::format("{} run --source {} {} --cpu-threads 3 --record {}", bin,
                                 (d / "raw.h5").string(), common, (d / "three.h5").string()),
                     d / "three.log") == 0);
  const std::string log3 = file_text(d / "three.log");
  INFO(log3);
  CHECK(log3.find("cpu (Eigen, 3 threads)") != std::string::npos);

  std::vector<hsize_t> shape1, shape3;
  const std::vector<float> one = read_pixels(d / "one.h5", shape1);
  const std::vector<float> three = read_pixels(d / "three.h5", shape3);
  REQUIRE(shape1 == std::vector<hsize_t>{300, 1024});
  REQUIRE(shape3 == shape1);
  // Same float32 products over row blocks; batches differ between the runs (timing), and a
  // batch of one is a GEMV where a larger one is a GEMM, so allow last-bit differences.
  float scale = 0, worst = 0;
  for (size_t i = 0; i < one.size(); ++i) {
    scale = std::max(scale, std::abs(one[i]));
    worst = std::max(worst, std::abs(one[i] - three[i]));
  }
  MESSAGE(fmt::format("largest difference {:.3g} of image scale {:.3g}", worst, scale));
  CHECK(scale > 0);
  CHECK(worst <= 1e-5f * scale);

  CHECK(run_logged(fmt::format("{} run --frames 1 {} --cpu-threads 0", bin, common),
                   d / "zero.log") != 0);
  CHECK(file_text(d / "zero.log").find("--cpu-threads 0") != std::string::npos);
  fs::remove_all(d);
}
