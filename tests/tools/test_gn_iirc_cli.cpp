// `reconstruct` and `run` with a default gn model on the IIRC tank recording, through the real
// binary: read as stored (EIDORS polarity) every frame is named as not matching the model, with
// the correlation and the fix (--invert); read with --invert none diverges and the summary says
// so. Neither uses a reference frame, and a --reference given is named as ignored.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

#include <fmt/format.h>

#include "eit/recon/array_file.hpp"
#include "file_text.hpp"
#include "test_data.hpp"

namespace fs = std::filesystem;

namespace {

struct Output {
  int rc = -1;
  std::string out, err;
};

Output eitstream(const std::string& args, const fs::path& dir) {
  Output r;
  r.rc = std::system(fmt::format("{} {} >{} 2>{}", EITSTREAM_BIN, args,
                                 (dir / "stdout.txt").string(), (dir / "stderr.txt").string())
                         .c_str());
  r.out = eit::test::file_text(dir / "stdout.txt");
  r.err = eit::test::file_text(dir / "stderr.txt");
  return r;
}

}  // namespace

TEST_CASE("reconstruct: a default gn model on IIRC names the polarity, and --invert converges") {
  const auto iirc = eit::test::shared_data_file("recordings/iirc_data_2006.mat");
  if (!iirc) return;
  if (!eit::recon::mat_reader_available()) {
    eit::test::report_skip("gn IIRC reconstruct", "built without libmatio");
    return;
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_gn_iirc_{}", ::getpid());
  fs::create_directories(dir);
  const std::string model = (dir / "gn.h5").string();
  REQUIRE(eitstream(fmt::format("model build --algorithm gn -o {}", model), dir).rc == 0);
  const std::string common =
      fmt::format("reconstruct --quiet --model {} --variable v_rotate {}", model, iirc->string());

  const Output as_stored = eitstream(common + " -o " + (dir / "a.h5").string(), dir);
  INFO(as_stored.err);
  REQUIRE(as_stored.rc == 0);
  CHECK(as_stored.err.find("100 of 100 cold-started frames do not match the gn model") !=
        std::string::npos);
  CHECK(as_stored.err.find("the first: -0.99") != std::string::npos);
  CHECK(as_stored.err.find("read it with --invert") != std::string::npos);
  // A gn model uses no reference frame, and reconstruct says so as run does.
  CHECK(as_stored.err.find("reference none") != std::string::npos);
  CHECK(as_stored.err.find("first:10") == std::string::npos);

  const Output inverted =
      eitstream(common + " --invert --reference first:5 -o " + (dir / "b.h5").string(), dir);
  INFO(inverted.out, inverted.err);
  REQUIRE(inverted.rc == 0);
  CHECK(inverted.out.find("gn: 100 frames, 0 diverged") != std::string::npos);
  CHECK(inverted.out.find("correlation 0.99") != std::string::npos);
  CHECK(inverted.err.find("do not match") == std::string::npos);
  CHECK(inverted.err.find("--reference first:5 ignored: a gn model") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("run: a gn model's summary names mismatched frames and counts divergences") {
  const auto iirc = eit::test::shared_data_file("recordings/iirc_data_2006.mat");
  if (!iirc) return;
  if (!eit::recon::mat_reader_available()) {
    eit::test::report_skip("gn IIRC run", "built without libmatio");
    return;
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_gn_iirc_run_{}", ::getpid());
  fs::create_directories(dir);
  const std::string model = (dir / "gn.h5").string();
  REQUIRE(eitstream(fmt::format("model build --algorithm gn -o {}", model), dir).rc == 0);
  const std::string common = fmt::format(
      "run --quiet --model {} --source {} --variable v_rotate --frames 12 --fps 0 "
      "--policy lossless --endpoint tcp://127.0.0.1:*",
      model, iirc->string());

  const Output as_stored = eitstream(common, dir);
  INFO(as_stored.out, as_stored.err);
  REQUIRE(as_stored.rc == 0);
  // No reference capture for absolute imaging: every frame reaches the gn solver.
  CHECK(as_stored.err.find("reference none") != std::string::npos);
  CHECK(as_stored.out.find("gn: 12 frames, 12 diverged") != std::string::npos);
  CHECK(as_stored.err.find("do not match the gn model") != std::string::npos);
  CHECK(as_stored.err.find("read it with --invert") != std::string::npos);

  const Output inverted = eitstream(common + " --invert", dir);
  INFO(inverted.out, inverted.err);
  REQUIRE(inverted.rc == 0);
  CHECK(inverted.out.find("gn: 12 frames, 0 diverged") != std::string::npos);
  CHECK(inverted.err.find("do not match") == std::string::npos);
  fs::remove_all(dir);
}
