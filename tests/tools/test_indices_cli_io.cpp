// `eitstream indices` at the edges of its input and output: a recording whose writer was killed
// (still marked open for SWMR writing) is read, an output that cannot be written fails the
// command instead of leaving a cut-off file behind with status 0, and a truncated recording says
// so. Through the real binary.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "cli_run.hpp"
#include "eit/recon/array_file.hpp"
#include "test_data.hpp"

namespace fs = std::filesystem;
using eit::test::contains;
using eit::test::run_eitstream;

TEST_CASE("indices reads a recording whose writer was killed, and fails on an unwritable output") {
  const fs::path d = eit::test::fresh_work_dir("indio");
  const fs::path images = d / "killed.h5";
  // SIGKILL while recording: the file stays marked open for SWMR writing; a plain open refuses it.
  const std::string cmd = fmt::format(
      "{} run --fps 200 --duration 20 --endpoint 'tcp://127.0.0.1:*' --quiet --record {} "
      ">/dev/null 2>&1 & pid=$!; sleep 2.5; kill -9 $pid; wait $pid",
      EITSTREAM_BIN, images.string());
  REQUIRE(std::system(cmd.c_str()) != -1);  // the shell ran (the run itself is killed)
  REQUIRE(fs::exists(images));
  const auto r = run_eitstream(
      fmt::format("indices {} -o {}", images.string(), (d / "breaths.json").string()));
  CAPTURE(r.output);
  CHECK(r.code == 0);
  CHECK(fs::file_size(d / "breaths.json") > 0);

  // /dev/full takes the open and fails every write with ENOSPC, as a full disk does.
  const auto full = run_eitstream(fmt::format("indices {} -o /dev/full", images.string()));
  CHECK(full.code != 0);
  CHECK(contains(full.output, "-o /dev/full: writing failed: No space left on device"));
  const auto npy = run_eitstream(fmt::format("indices {} -o {} --images-out /dev/full",
                                             images.string(), (d / "b2.json").string()));
  CHECK(npy.code != 0);
  CHECK(contains(npy.output, "--images-out /dev/full: writing failed: No space left on device"));
}

TEST_CASE("indices on a truncated recording warns that its last frame is cut off") {
  const auto eit = eit::test::shared_data_file("recordings/draeger_ID_SC_10_60.eit");
  if (!eit) return;
  const fs::path d = eit::test::fresh_work_dir("indtrunc");
  const fs::path cut = d / "cut.eit";
  {
    std::ifstream in(*eit, std::ios::binary);
    std::string head(150'000, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    std::ofstream(cut, std::ios::binary).write(head.data(), in.gcount());
  }
  const auto r =
      run_eitstream(fmt::format("indices {} -o {}", cut.string(), (d / "b.json").string()));
  CAPTURE(r.output);
  CHECK(r.code == 0);
  CHECK(contains(r.output, "eitstream: warning: "));
  CHECK(contains(r.output, "truncated"));
}

TEST_CASE(
    "indices refuses to replace its outputs without force and a missing output folder and with "
    "force writes images that read back") {
  const fs::path d = eit::test::fresh_work_dir("indkeep");
  const fs::path images = d / "images.h5";
  const auto rec = run_eitstream(
      fmt::format("run --fps 200 --duration 1 --endpoint 'tcp://127.0.0.1:*' --quiet --record {}",
                  images.string()));
  REQUIRE(rec.code == 0);
  const fs::path kept = d / "kept.json", npy = d / "kept.npy";
  std::ofstream(kept) << "an earlier result";
  std::ofstream(npy) << "earlier images";

  const auto json = run_eitstream(fmt::format("indices {} -o {}", images.string(), kept.string()));
  CAPTURE(json.output);
  CHECK(json.code != 0);
  CHECK(contains(json.output, fmt::format("-o {}: the file exists; give --force", kept.string())));
  const auto images_out =
      run_eitstream(fmt::format("indices {} -o {} --images-out {}", images.string(),
                                (d / "new.json").string(), npy.string()));
  CHECK(images_out.code != 0);
  CHECK(contains(images_out.output, fmt::format("--images-out {}: the file exists", npy.string())));
  CHECK(!fs::exists(d / "new.json"));  // refused before any work
  CHECK(fs::file_size(kept) == std::string("an earlier result").size());
  CHECK(fs::file_size(npy) == std::string("earlier images").size());

  const auto forced =
      run_eitstream(fmt::format("indices {} -o {} --force", images.string(), kept.string()));
  CHECK(forced.code == 0);
  CHECK(fs::file_size(kept) > 100);
  // The images replaced with --force read back as [frames, ny, nx] float32.
  const auto images_forced = run_eitstream(fmt::format(
      "indices {} -o {} --images-out {} --force", images.string(), kept.string(), npy.string()));
  CHECK(images_forced.code == 0);
  const eit::recon::DenseArray z = eit::recon::read_npy(npy);
  REQUIRE(z.shape.size() == 3);
  CHECK(z.shape[0] >= 100);  // 1 s at 200 frames/s
  CHECK(z.shape[1] * z.shape[2] > 100);

  const auto no_folder = run_eitstream(
      fmt::format("indices {} -o {}", images.string(), (d / "missing" / "b.json").string()));
  CHECK(no_folder.code != 0);
  CHECK(contains(no_folder.output,
                 fmt::format("the folder {} does not exist", (d / "missing").string())));
}
