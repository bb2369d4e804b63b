// Recordings through the real binary where a file is not what the command first assumes: a raw
// frame file given to `indices`, a replay in which no frame can be read, a recording that meets
// the process's file-size limit.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "cli_run.hpp"

namespace fs = std::filesystem;
using namespace eit::test;

TEST_CASE("indices reconstructs a raw frame file instead of refusing it as not images") {
  const fs::path d = fresh_work_dir("inputs_raw_indices");
  const fs::path raw = d / "frames.h5";
  REQUIRE(
      run_eitstream(fmt::format("run --frames 200 --fps 0 --quiet --record-raw {}", raw.string()))
          .code == 0);
  const CliResult r = run_eitstream(
      fmt::format("indices {} --fps 50 -o {}", raw.string(), (d / "i.json").string()));
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK(contains(r.output, "200 frames at 50 Hz"));
  CHECK_FALSE(contains(r.output, "expected 'eitstream-images'"));
  fs::remove_all(d);
}

TEST_CASE("a replay in which no frame can be read ends the run as a failed source") {
  const fs::path d = fresh_work_dir("inputs_no_frame");
  std::ofstream out(d / "bad.csv");
  for (int row = 0; row < 4; ++row) {
    for (int i = 0; i < 207; ++i) out << "1,";
    out << "x\n";
  }
  out.close();
  const CliResult r = run_eitstream(
      fmt::format("run --source {} --values-per-frame 208 --reference model --fps 0 --loop --quiet",
                  (d / "bad.csv").string()));
  INFO(r.output);
  CHECK(r.code == 5);
  CHECK(contains(r.output, "no valid frame from"));
  fs::remove_all(d);
}

TEST_CASE("a recording stops whole before the file-size limit and stays readable") {
  const fs::path d = fresh_work_dir("inputs_fsize");
  const fs::path raw = d / "fr.h5";
  // 8192 blocks of 1 KiB: some 9,000 raw frames of 208 floats fit; 40,000 come.
  const std::string command = fmt::format(
      "ulimit -f 8192; {} run --frames 40000 --fps 0 --policy lossless --quiet --record-raw {} "
      "> {} 2>&1",
      EITSTREAM_BIN, raw.string(), (d / "log.txt").string());
  const int status = std::system(("bash -c '" + command + "'").c_str());
  std::ifstream log(d / "log.txt");
  const std::string text{std::istreambuf_iterator<char>(log), {}};
  INFO(text);
  CHECK(WEXITSTATUS(status) == 6);
  CHECK(contains(text, "ulimit -f"));
  CHECK(fs::file_size(raw) <= 8192 * 1024);
  // The rows written are readable by eitstream itself (libhdf5 1.10 refused the old file).
  const CliResult r =
      run_eitstream(fmt::format("reconstruct {} -o {}", raw.string(), (d / "img.h5").string()));
  INFO(r.output);
  CHECK(r.code == 0);
  fs::remove_all(d);
}
