// Complex frames end to end through the real binary: a gn model built with --complex reads a
// complex64 .npy with --complex interleaved and writes (Re σ, Im σ) images; real frames for it,
// and interleaved frames for a real model, are refused naming the option.
//
// The frames are a homogeneous complex body: for point electrodes the voltages scale as 1/σ, so
// v_ref of a JAC model on the same mesh (σ = 1) divided by σ* is the frame of σ*.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "../sinks/h5_read_support.hpp"
#include "complex_npy.hpp"
#include "file_text.hpp"
#include "gmsh_skip.hpp"

namespace fs = std::filesystem;
namespace h5r = eit::test::h5read;
using eit::test::write_complex_npy;

namespace {

struct Result {
  int rc = -1;
  std::string err;
};

Result eitstream(const std::string& args, const fs::path& dir) {
  const fs::path err = dir / "stderr.txt";
  Result r;
  r.rc = std::system(fmt::format("{} {} >{} 2>{}", EITSTREAM_BIN, args,
                                 (dir / "stdout.txt").string(), err.string())
                         .c_str());
  r.err = eit::test::file_text(err);
  return r;
}

double median(std::vector<double> x) {
  std::nth_element(x.begin(), x.begin() + x.size() / 2, x.end());
  return x[x.size() / 2];
}

struct Fixture {
  fs::path dir = fs::temp_directory_path() / fmt::format("eit_complex_frames_{}", ::getpid());
  std::vector<double> v_ref;  // σ = 1 on the shared mesh, model order
  size_t n_elem = 0;

  Fixture() {
    fs::create_directories(dir);
    // Same mesh (circle, h0 0.2: generated, so each test skips without Gmsh) and protocol for
    // both models.
    REQUIRE(eitstream(fmt::format("model build --algorithm jac --h0 0.2 -o {}",
                                  (dir / "jac.h5").string()),
                      dir)
                .rc == 0);
    REQUIRE(eitstream(fmt::format("model build --algorithm gn --complex --h0 0.2 --iterations 8 "
                                  "-o {}",
                                  (dir / "gnc.h5").string()),
                      dir)
                .rc == 0);
    const hid_t f = H5Fopen((dir / "jac.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    v_ref = h5r::dataset<double>(f, "v_ref");
    std::vector<hsize_t> shape;
    h5r::dataset<int64_t>(f, "geometry/elements", &shape);
    H5Fclose(f);
    REQUIRE(v_ref.size() == 208);
    REQUIRE(shape.size() == 2);
    n_elem = shape[0];
  }
  ~Fixture() { fs::remove_all(dir); }

  // Two frames of the homogeneous body σ.
  fs::path recording(const std::string& name, std::complex<double> sigma) const {
    std::vector<std::complex<float>> v;
    for (int frame = 0; frame < 2; ++frame)
      for (double x : v_ref) v.emplace_back(std::complex<double>(x) / sigma);
    const fs::path p = dir / name;
    write_complex_npy(p, v, 2);
    return p;
  }

  // reconstruct --complex interleaved; the images (flattened) and the file's complex attribute.
  std::vector<float> reconstruct(const fs::path& rec, std::string* complex_attr) const {
    const fs::path out = dir / (rec.stem().string() + ".images.h5");
    const Result r = eitstream(fmt::format("reconstruct {} --model {} --complex interleaved -o {}",
                                           rec.string(), (dir / "gnc.h5").string(),
                                           out.string()),
                               dir);
    INFO(r.err);
    REQUIRE(r.rc == 0);
    const hid_t f = H5Fopen(out.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    std::vector<hsize_t> shape;
    auto px = h5r::dataset<float>(f, "images", &shape);
    *complex_attr = h5r::attr_string(f, "complex");
    H5Fclose(f);
    REQUIRE(shape.size() == 2);
    CHECK(shape[0] == 2);
    CHECK(shape[1] == 2 * n_elem);  // (Re σ, Im σ) per element
    return px;
  }
};

}  // namespace

TEST_CASE("reconstruct --complex interleaved: a homogeneous complex body comes back as σ") {
  if (eit::test::skip_without_gmsh("reconstruct --complex interleaved")) return;
  Fixture fx;
  const std::complex<double> sigma(1.5, 0.6);
  std::string attr;
  const auto px = fx.reconstruct(fx.recording("complex.npy", sigma), &attr);
  CHECK(attr == "interleaved");
  std::vector<double> re, im;
  for (size_t i = 0; i + 1 < px.size(); i += 2) {
    re.push_back(px[i]);
    im.push_back(px[i + 1]);
  }
  // Coarse mesh, 8 iterations: the median element within 0.1 of σ (the start is 1 + 0i).
  CHECK(std::abs(median(re) - sigma.real()) < 0.1);
  CHECK(std::abs(median(im) - sigma.imag()) < 0.1);
}

TEST_CASE("reconstruct --complex interleaved: a real body has no imaginary part") {
  if (eit::test::skip_without_gmsh("reconstruct --complex interleaved")) return;
  Fixture fx;
  std::string attr;
  const auto px = fx.reconstruct(fx.recording("real.npy", {1.5, 0.0}), &attr);
  std::vector<double> re;
  double im_max = 0.0;
  for (size_t i = 0; i + 1 < px.size(); i += 2) {
    re.push_back(px[i]);
    im_max = std::max(im_max, std::abs(double(px[i + 1])));
  }
  CHECK(std::abs(median(re) - 1.5) < 0.1);
  CHECK(im_max < 1e-3);
}

TEST_CASE("complex model with real frames, real model with interleaved frames: refused by name") {
  if (eit::test::skip_without_gmsh(
          "complex model with real frames, real model with interleaved frames"))
    return;
  Fixture fx;
  const fs::path rec = fx.recording("complex.npy", {1.5, 0.6});
  const std::string gnc = (fx.dir / "gnc.h5").string(), jac = (fx.dir / "jac.h5").string();

  Result r = eitstream(fmt::format("reconstruct {} --model {} -o {}", rec.string(), gnc,
                                   (fx.dir / "a.h5").string()),
                       fx.dir);
  CHECK(r.rc != 0);
  CHECK(r.err.find("--complex interleaved") != std::string::npos);
  CHECK(r.err.find("complex conductivity") != std::string::npos);

  r = eitstream(fmt::format("run --source {} --model {} --frames 1", rec.string(), gnc), fx.dir);
  CHECK(r.rc != 0);
  CHECK(r.err.find("--complex interleaved") != std::string::npos);

  r = eitstream(fmt::format("reconstruct {} --model {} --complex interleaved -o {}", rec.string(),
                            jac, (fx.dir / "b.h5").string()),
                fx.dir);
  CHECK(r.rc != 0);
  CHECK(r.err.find("need a gn model built with --complex") != std::string::npos);
}
