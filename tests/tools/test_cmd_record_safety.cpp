// What `eitstream run --record` and `eitstream reconstruct` do to keep recordings safe, through
// the real binary: an existing file is refused without --force, two outputs never share a file, a
// disk that fails mid-run ends the run with exit status 6 and its reason (the stream goes on),
// a replay at another speed stores the recording's own frame rate, and reconstruct counts the
// frames it could not image.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "../sinks/h5_read_support.hpp"
#include "cli_run.hpp"

namespace fs = std::filesystem;
namespace h5r = eit::test::h5read;
using eit::test::contains;
using eit::test::run_eitstream;

namespace {

const char* kQuick = "--frames 40 --fps 0 --policy lossless --endpoint 'tcp://127.0.0.1:*' --quiet";

double stored_rate(const fs::path& path) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const double rate = h5r::attr_double(f, "frame_rate_hz");
  H5Fclose(f);
  return rate;
}

}  // namespace

TEST_CASE("run --record refuses an existing file unless --force, and one file for both recorders") {
  const fs::path d = eit::test::fresh_work_dir("recsafe");
  const fs::path earlier = d / "earlier.h5";
  std::ofstream(earlier) << "yesterday's recording";
  for (const char* option : {"--record", "--record-raw"}) {
    CAPTURE(option);
    const auto r = run_eitstream(fmt::format("run {} {} {}", kQuick, option, earlier.string()));
    CHECK(r.code != 0);
    CHECK(contains(r.output, fmt::format("{} {}: the file exists; give --force to replace it",
                                         option, earlier.string())));
    CHECK(fs::file_size(earlier) == std::string("yesterday's recording").size());
  }
  const auto same = run_eitstream(fmt::format("run {} --record {} --record-raw {}", kQuick,
                                              (d / "one.h5").string(), (d / "one.h5").string()));
  CHECK(same.code != 0);
  CHECK(contains(same.output, "--record and --record-raw name the same file"));
  CHECK_FALSE(fs::exists(d / "one.h5"));

  const auto forced =
      run_eitstream(fmt::format("run {} --record {} --force", kQuick, earlier.string()));
  CHECK(forced.code == 0);
  CHECK(contains(forced.output, "40 frames written, 0 lost"));
}

TEST_CASE("run --record and reconstruct -o in a missing folder are refused before any work") {
  const fs::path d = eit::test::fresh_work_dir("recfolder");
  const fs::path missing = d / "no-such-folder";
  for (const char* option : {"--record", "--record-raw"}) {
    CAPTURE(option);
    const auto r =
        run_eitstream(fmt::format("run {} {} {}", kQuick, option, (missing / "x.h5").string()));
    CAPTURE(r.output);
    CHECK(r.code == 1);
    CHECK(contains(r.output, fmt::format("{} {}: the folder {} does not exist", option,
                                         (missing / "x.h5").string(), missing.string())));
  }
  const auto first =
      run_eitstream(fmt::format("run {} --record-raw {}", kQuick, (d / "raw.h5").string()));
  REQUIRE(first.code == 0);
  const auto r = run_eitstream(fmt::format("reconstruct {} -o {}", (d / "raw.h5").string(),
                                           (missing / "images.h5").string()));
  CAPTURE(r.output);
  CHECK(r.code != 0);
  CHECK(contains(r.output, fmt::format("the folder {} does not exist", missing.string())));
  CHECK_FALSE(fs::exists(missing));
}

TEST_CASE("reconstruct refuses two recordings that would write one image file, before any work") {
  const fs::path d = eit::test::fresh_work_dir("recsafe2");
  fs::create_directories(d / "monday");
  fs::create_directories(d / "tuesday");
  for (const char* day : {"monday", "tuesday"})
    REQUIRE(
        run_eitstream(fmt::format("run {} --record-raw {}", kQuick, (d / day / "bed5.h5").string()))
            .code == 0);
  const auto r = run_eitstream(
      fmt::format("reconstruct {} {} -o {} --quiet", (d / "monday" / "bed5.h5").string(),
                  (d / "tuesday" / "bed5.h5").string(), (d / "out").string()));
  CHECK(r.code != 0);
  CHECK(contains(r.output, "would both be written to"));
  CHECK_FALSE(fs::exists(d / "out" / "bed5.images.h5"));

  const fs::path out = d / "monday.images.h5";
  std::ofstream(out) << "kept";
  const auto exists = run_eitstream(fmt::format("reconstruct {} -o {} --quiet",
                                                (d / "monday" / "bed5.h5").string(), out.string()));
  CHECK(exists.code != 0);
  CHECK(contains(exists.output, "the file exists; give --force to replace it"));
  CHECK(fs::file_size(out) == 4);
  CHECK(run_eitstream(fmt::format("reconstruct {} -o {} --quiet --force",
                                  (d / "monday" / "bed5.h5").string(), out.string()))
            .code == 0);
}

TEST_CASE("a recording whose writes fail ends run with status 6 and the system's reason") {
  const fs::path d = eit::test::fresh_work_dir("recsafe3");
  // Every write to the file past 400 KiB fails with EIO (support/fail_writes.c, preloaded), as a
  // dying disk fails it: after the first chunks. (A file-size limit no longer reaches this path:
  // the recorder stops before it, test_recording_inputs_cli.cpp.)
  const std::string cmd = fmt::format(
      "sh -c \"EIT_FAIL_WRITES_PATH=images.h5 EIT_FAIL_WRITES_AFTER=409600 LD_PRELOAD={} exec {} "
      "run --frames 2000 --fps 0 --policy lossless --endpoint 'tcp://127.0.0.1:*' --quiet "
      "--record {}\" 2>&1",
      EIT_FAIL_WRITES_SHIM, EITSTREAM_BIN, (d / "images.h5").string());
  std::string output;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  const int status = ::pclose(pipe);
  CAPTURE(output);
  REQUIRE(WIFEXITED(status));  // not a crash in libhdf5's clean-up at exit
  CHECK(WEXITSTATUS(status) == 6);
  CHECK(contains(output, "recording stopped: --record writing rows to the file failed after"));
  CHECK(contains(output, "Input/output error"));
  CHECK(contains(output, "THE RECORDING IS INCOMPLETE"));
  CHECK(contains(output, "frames: in 2000"));  // the stream itself went on
}

TEST_CASE("a replay at --speed 4 records the recording's own frame rate, not the pace") {
  const fs::path d = eit::test::fresh_work_dir("recsafe4");
  REQUIRE(run_eitstream(fmt::format("run --frames 100 --fps 1000 --endpoint 'tcp://127.0.0.1:*' "
                                    "--quiet --policy lossless --record-raw {}",
                                    (d / "raw.h5").string()))
              .code == 0);
  CHECK(stored_rate(d / "raw.h5") == 1000.0);
  const auto r = run_eitstream(fmt::format(
      "run --source {} --speed 4 --endpoint 'tcp://127.0.0.1:*' --quiet --policy lossless "
      "--record {} --record-raw {}",
      (d / "raw.h5").string(), (d / "img4.h5").string(), (d / "raw4.h5").string()));
  REQUIRE(r.code == 0);
  CHECK(stored_rate(d / "img4.h5") == 1000.0);
  CHECK(stored_rate(d / "raw4.h5") == 1000.0);
}

TEST_CASE("reconstruct counts the non-finite frames it wrote with empty images") {
  const fs::path d = eit::test::fresh_work_dir("recsafe5");
  // 20 frames of the built-in model's 208 values as .npy float32; frames 3 and 7 hold a NaN.
  std::vector<float> values(20 * 208);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 1.0f + 0.001f * static_cast<float>(i % 97);
  values[3 * 208 + 5] = std::nanf("");
  values[7 * 208] = std::nanf("");
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (20, 208), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  {
    std::ofstream out(d / "nan.npy", std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const uint16_t len = static_cast<uint16_t>(header.size());
    out.write(reinterpret_cast<const char*>(&len), 2);
    out << header;
    out.write(reinterpret_cast<const char*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(float)));
  }
  const auto r = run_eitstream(fmt::format("reconstruct {} -o {} --quiet", (d / "nan.npy").string(),
                                           (d / "nan.h5").string()));
  CAPTURE(r.output);
  CHECK(r.code == 0);
  CHECK(contains(r.output, "0 unreadable, 2 non-finite (empty images, flag 1), 0 lost on write"));
  // The stored reference says what it is: the frames it had, and those it left out.
  const auto reference = [](const fs::path& path) {
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    const std::string text = h5r::attr_string(f, "reference");
    H5Fclose(f);
    return text;
  };
  CHECK(reference(d / "nan.h5") ==
        "first:10 (mean of frames 0–9 (2 unreadable or non-finite left out))");
  REQUIRE(run_eitstream(fmt::format("reconstruct {} -o {} --quiet --reference first:1000",
                                    (d / "nan.npy").string(), (d / "all.h5").string()))
              .code == 0);
  CHECK(reference(d / "all.h5") ==
        "first:1000 (mean of frames 0–19 (2 unreadable or non-finite left out))");
}
