// A raw-frame file recorded from complex frames reads back as complex: `run --record-raw` of a
// complex64 .npy through a complex gn model keeps each measurement's (re, im) pair (root attribute
// complex = "interleaved"); `reconstruct` and `run --source` of that file must read the pairs as
// pairs (both parts for --complex interleaved, one part otherwise) and give the images the
// source itself gives. Before the reader honoured the attribute it refused the file ("rows have
// 416 values, the stored protocol has 208 measurements").
#include <doctest/doctest.h>

#include <complex>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../sinks/h5_read_support.hpp"
#include "cli_run.hpp"
#include "complex_npy.hpp"
#include "gmsh_skip.hpp"

namespace fs = std::filesystem;
namespace h5r = eit::test::h5read;
using eit::test::contains;
using eit::test::run_eitstream;

namespace {

constexpr size_t kFrames = 5;

struct RoundTrip {
  fs::path dir = eit::test::cli_temp_path("eit_complex_raw", "dir");
  std::vector<std::complex<float>> source;  // kFrames × n_meas, model order

  RoundTrip() {
    fs::create_directories(dir);
    for (const char* args : {"--algorithm jac --h0 0.2 -o {}/jac.h5",
                             "--algorithm gn --complex --h0 0.2 --iterations 4 -o {}/gnc.h5"}) {
      const auto r = run_eitstream(fmt::format(fmt::runtime(std::string("model build ") + args),
                                               dir.string()));
      INFO(r.output);
      REQUIRE(r.code == 0);
    }
    const hid_t f = H5Fopen((dir / "jac.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    const std::vector<double> v_ref = h5r::dataset<double>(f, "v_ref");
    H5Fclose(f);
    // A homogeneous body whose complex conductivity changes from frame to frame (voltages scale
    // as 1/σ), so every frame and both parts differ.
    for (size_t k = 0; k < kFrames; ++k) {
      const std::complex<double> sigma(1.2 + 0.1 * double(k), 0.3 + 0.07 * double(k));
      for (double x : v_ref) source.emplace_back(std::complex<double>(x) / sigma);
    }
    eit::test::write_complex_npy(dir / "c.npy", source, kFrames);
  }
  ~RoundTrip() { fs::remove_all(dir); }

  std::string path(const char* name) const { return (dir / name).string(); }

  // `reconstruct INPUT --model MODEL OPTIONS -o OUT`; the images, flattened.
  std::vector<float> reconstruct(const std::string& input, const char* model,
                                 const std::string& options, const char* out) const {
    const auto r = run_eitstream(fmt::format("reconstruct {} --model {} {} --quiet -o {}", input,
                                             path(model), options, path(out)));
    INFO(r.output);
    REQUIRE(r.code == 0);
    const hid_t f = H5Fopen(path(out).c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    std::vector<hsize_t> shape;
    auto px = h5r::dataset<float>(f, "images", &shape);
    H5Fclose(f);
    REQUIRE(shape.size() == 2);
    CHECK(shape[0] == kFrames);
    return px;
  }
};

}  // namespace

TEST_CASE("complex raw-frame file: recorded pairs read back as complex frames") {
  if (eit::test::skip_without_gmsh("complex raw-frame file")) return;
  RoundTrip rt;
  // --record-raw of the complex source through the complex model.
  auto r = run_eitstream(fmt::format(
      "run --source {} --model {} --complex interleaved --fps 1000 --frames {} --quiet "
      "--endpoint tcp://127.0.0.1:* --record-raw {}",
      rt.path("c.npy"), rt.path("gnc.h5"), kFrames, rt.path("raw.h5")));
  INFO(r.output);
  REQUIRE(r.code == 0);

  // The file holds the source's pairs exactly, marked complex.
  const hid_t f = H5Fopen(rt.path("raw.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  CHECK(h5r::attr_string(f, "complex") == "interleaved");
  // A gn model uses no reference ("none", zeros given to the pipeline): no /v_ref, which a later
  // difference reconstruction of the file would take for the frames' reference.
  CHECK(H5Lexists(f, "v_ref", H5P_DEFAULT) == 0);
  std::vector<hsize_t> shape;
  const auto frames = h5r::dataset<float>(f, "frames", &shape);
  H5Fclose(f);
  REQUIRE(shape.size() == 2);
  REQUIRE(shape[0] == kFrames);
  REQUIRE(shape[1] == 2 * rt.source.size() / kFrames);
  size_t differing = 0;
  for (size_t i = 0; i < rt.source.size(); ++i)
    differing += frames[2 * i] != rt.source[i].real() || frames[2 * i + 1] != rt.source[i].imag();
  CHECK(differing == 0);

  // Both parts, through the complex model: the same images as from the source itself.
  const std::string ref = "--reference first:2";
  const auto direct = rt.reconstruct(rt.path("c.npy"), "gnc.h5",
                                     "--complex interleaved " + ref, "direct.h5");
  const auto replayed = rt.reconstruct(rt.path("raw.h5"), "gnc.h5",
                                       "--complex interleaved " + ref, "replayed.h5");
  CHECK(replayed == direct);

  // One part, through a real model: the imaginary part of the file is that of the source.
  const auto direct_im = rt.reconstruct(rt.path("c.npy"), "jac.h5", "--complex imag " + ref,
                                        "direct_im.h5");
  const auto replayed_im = rt.reconstruct(rt.path("raw.h5"), "jac.h5", "--complex imag " + ref,
                                          "replayed_im.h5");
  CHECK(replayed_im == direct_im);
  CHECK(replayed_im != rt.reconstruct(rt.path("raw.h5"), "jac.h5", ref, "replayed_re.h5"));
}

TEST_CASE("complex raw-frame file: its stored complex reference is read back too") {
  if (eit::test::skip_without_gmsh("complex raw-frame file")) return;
  RoundTrip rt;
  // frame:1 is known at start, so the raw file stores it as /v_ref (2·n_meas floats).
  auto r = run_eitstream(fmt::format(
      "run --source {} --model {} --complex interleaved --reference frame:1 --fps 1000 "
      "--frames {} --quiet --endpoint tcp://127.0.0.1:* --record-raw {}",
      rt.path("c.npy"), rt.path("gnc.h5"), kFrames, rt.path("raw.h5")));
  INFO(r.output);
  REQUIRE(r.code == 0);

  // reconstruct's default for a raw file is its stored reference: the same images as frame:1.
  const auto direct = rt.reconstruct(rt.path("c.npy"), "gnc.h5",
                                     "--complex interleaved --reference frame:1", "direct.h5");
  const auto replayed =
      rt.reconstruct(rt.path("raw.h5"), "gnc.h5", "--complex interleaved", "replayed.h5");
  CHECK(replayed == direct);

  // run --source replays it through a real model (real part), reference from the file.
  r = run_eitstream(fmt::format(
      "run --source {} --model {} --frames {} --endpoint tcp://127.0.0.1:* --record {}",
      rt.path("raw.h5"), rt.path("jac.h5"), kFrames, rt.path("images.h5")));
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "reference variable:v_ref"));
  const hid_t f = H5Fopen(rt.path("images.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  std::vector<hsize_t> shape;
  h5r::dataset<float>(f, "images", &shape);
  H5Fclose(f);
  REQUIRE(shape.size() == 2);
  CHECK(shape[0] == kFrames);
}
