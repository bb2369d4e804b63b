// `eitstream reconstruct --backend auto|cpu|cuda` through the real binary: auto falls back to the
// CPU and says why, cuda without a plugin fails with the reason, the three-thread engine gives
// the same images whatever the batch split, and (on a machine with the CUDA plugin and a device)
// the CUDA images match the CPU's.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>

#include "../sinks/h5_read_support.hpp"
#include "file_text.hpp"
#include "test_data.hpp"

namespace fs = std::filesystem;
namespace h5r = eit::test::h5read;

namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

Result run(const std::string& args, const fs::path& dir, const std::string& env = "") {
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  Result r;
  r.rc = std::system(
      fmt::format("{} {} {} >{} 2>{}", env, EITSTREAM_BIN, args, out.string(), err.string())
          .c_str());
  r.out = eit::test::file_text(out);
  r.err = eit::test::file_text(err);
  return r;
}

fs::path work_dir() {
  const fs::path d = fs::temp_directory_path() / fmt::format("eit_recon_backend_{}", ::getpid());
  fs::create_directories(d);
  return d;
}

// n frames of 208 float32 values around 1 (the built-in model's measurement count).
fs::path write_recording(const fs::path& dir, size_t n) {
  const fs::path p = dir / "rec.f32";
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.f, 0.05f);
  std::vector<float> v(n * 208);
  for (auto& x : v) x = 1.f + noise(rng);
  std::FILE* f = std::fopen(p.c_str(), "wb");
  std::fwrite(v.data(), sizeof(float), v.size(), f);
  std::fclose(f);
  return p;
}

std::vector<float> images(const fs::path& p, std::vector<uint64_t>* seq = nullptr) {
  const hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return {};
  auto px = h5r::dataset<float>(f, "images");
  if (seq) *seq = h5r::dataset<uint64_t>(f, "seq");
  H5Fclose(f);
  return px;
}

// Largest |a − b| relative to the largest |a|; 1 when the sizes differ.
double difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size() || a.empty()) return 1;
  double scale = 0, worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return 1;
      continue;
    }
    scale = std::max(scale, std::abs(double{a[i]}));
    worst = std::max(worst, std::abs(double{a[i]} - double{b[i]}));
  }
  return scale > 0 ? worst / scale : 1;
}

const char* kCommon = "--values-per-frame 208 --reference frame:0 --quiet";

}  // namespace

TEST_CASE("reconstruct --backend auto without the CUDA plugin uses the CPU and says why") {
  const fs::path d = work_dir();
  const fs::path rec = write_recording(d, 50);
  const std::string no_plugin = "EIT_GPU_PLUGIN=/nonexistent/libeit_gpu.so";
  const Result a = run(fmt::format("reconstruct {} {} --backend auto -o {}", rec.string(), kCommon,
                                   (d / "auto.h5").string()),
                       d, no_plugin);
  CHECK(a.rc == 0);
  CHECK(a.err.find("backend cpu") != std::string::npos);
  CHECK(a.err.find("no CUDA plugin") != std::string::npos);
  CHECK(images(d / "auto.h5").size() == 50 * 1024);

  const Result c = run(fmt::format("reconstruct {} {} --backend cuda -o {}", rec.string(), kCommon,
                                   (d / "cuda.h5").string()),
                       d, no_plugin);
  CHECK(c.rc != 0);
  CHECK(c.err.find("--backend cuda: no CUDA plugin") != std::string::npos);

  const Result bad = run(fmt::format("reconstruct {} {} --backend gpu -o {}", rec.string(), kCommon,
                                     (d / "bad.h5").string()),
                         d);
  CHECK(bad.rc != 0);
  CHECK(bad.err.find("expected auto, cpu or cuda") != std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("reconstruct gives the same images whatever the batch split, every frame in order") {
  const fs::path d = work_dir();
  const size_t n = 1000;
  const fs::path rec = write_recording(d, n);
  // One batch, one GEMM, against batches of 300 (a short last one) in GEMMs of 64 (short pieces).
  REQUIRE(run(fmt::format("reconstruct {} {} --backend cpu --batch 1000 --gemm-batch 1000 -o {}",
                          rec.string(), kCommon, (d / "one.h5").string()),
              d)
              .rc == 0);
  const Result split =
      run(fmt::format("reconstruct {} {} --backend cpu --batch 300 --gemm-batch 64 -o {}",
                      rec.string(), kCommon, (d / "split.h5").string()),
          d);
  REQUIRE(split.rc == 0);
  CHECK(split.out.find(fmt::format("{} frames →", n)) != std::string::npos);
  CHECK(split.out.find("thread CPU") != std::string::npos);
  std::vector<uint64_t> seq;
  const auto one = images(d / "one.h5"), parts = images(d / "split.h5", &seq);
  REQUIRE(seq.size() == n);
  for (size_t i = 0; i < n; ++i) REQUIRE(seq[i] == i);
  CHECK(difference(one, parts) <= 1e-6);
  // Frame 0 is the reference: its image is exactly zero (inside the mask).
  for (size_t p = 0; p < 1024; ++p) CHECK((std::isnan(parts[p]) || parts[p] == 0.f));
  fs::remove_all(d);
}

TEST_CASE("reconstruct --backend cuda matches the CPU (needs the CUDA plugin and a device)") {
  const fs::path d = work_dir();
  const fs::path rec = write_recording(d, 3000);
  const Result cuda = run(fmt::format("reconstruct {} {} --backend cuda -o {}", rec.string(),
                                      kCommon, (d / "cuda.h5").string()),
                          d);
  if (cuda.rc != 0) {
    MESSAGE("skipped: no CUDA plugin or device here (" << cuda.err.substr(0, 200) << ")");
    fs::remove_all(d);
    return;
  }
  CHECK(cuda.err.find("backend cuda") != std::string::npos);
  REQUIRE(run(fmt::format("reconstruct {} {} --backend cpu -o {}", rec.string(), kCommon,
                          (d / "cpu.h5").string()),
              d)
              .rc == 0);
  std::vector<uint64_t> seq;
  const auto on_gpu = images(d / "cuda.h5", &seq), on_cpu = images(d / "cpu.h5");
  REQUIRE(seq.size() == 3000);
  const double diff = difference(on_cpu, on_gpu);
  MESSAGE(fmt::format("CUDA vs CPU: largest difference {:.3g} of the image scale", diff));
  CHECK(diff <= 1e-4);
  fs::remove_all(d);
}

// The replay takes --reference, --backend, --normalize and --compress like any reconstruct
// (tests/tools/test_nats_reconstruct_options.cpp, with a server); what it cannot do is refused at
// set-up, before it connects (port 1: nothing listens there).
TEST_CASE("reconstruct nats:// refuses frame-numbered references and bad options before connecting") {
  const fs::path d = work_dir();
  const std::string uri = "'nats://127.0.0.1:1?site=s&bed=b&since=all'";
  const Result r = run(fmt::format("reconstruct {} --reference mean:2-4 -o {}", uri,
                                   (d / "n.h5").string()),
                       d);
  CHECK(r.rc != 0);
  if (r.err.find("built without NATS") != std::string::npos) {
    eit::test::report_skip("reconstruct nats:// option checks", "built without NATS (libnats-dev)");
    fs::remove_all(d);
    return;
  }
  CHECK(r.err.find("--reference mean:2-4 names frames of a recording file") != std::string::npos);
  const Result b = run(fmt::format("reconstruct {} --backend gpu -o {}", uri,
                                   (d / "n.h5").string()),
                       d);
  CHECK(b.rc != 0);
  CHECK(b.err.find("--backend 'gpu': expected auto, cpu or cuda") != std::string::npos);
  const Result c = run(fmt::format("reconstruct {} --compress 12 -o {}", uri,
                                   (d / "n.h5").string()),
                       d);
  CHECK(c.rc != 0);
  CHECK(c.err.find("--compress 12: expected 0 to 9") != std::string::npos);
  CHECK_FALSE(fs::exists(d / "n.h5"));
  fs::remove_all(d);
}
