// A raw-frame recording with a gap in it (frames the recorder never got), replayed by `run
// --source` and turned into images by `reconstruct`: the images keep the frames' original seq,
// the gap flag and the count of frames missing before them, and times that count the gap.
// Before, both renumbered the frames 0..n-1 and the gap vanished from the images.
#include <doctest/doctest.h>
#include <hdf5.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../sinks/h5_read_support.hpp"
#include "cli_run.hpp"

namespace fs = std::filesystem;
namespace h5r = eit::test::h5read;
using eit::test::run_eitstream;

namespace {

constexpr uint32_t kGapFlag = 4;  // pipeline::kFlagGapBefore, as docs/formats.md lists it

// 40 frames recorded as seq 0..19, then 60..79: 40 frames missing before row 20.
void forge_gap(const fs::path& raw) {
  std::vector<uint64_t> seq(40);
  std::vector<uint32_t> flags(40, 0), dropped(40, 0);
  for (size_t i = 0; i < 40; ++i) seq[i] = i < 20 ? i : i + 40;
  flags[20] = kGapFlag;
  dropped[20] = 40;
  const hid_t f = H5Fopen(raw.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const auto write = [&](const char* name, hid_t type, const void* data) {
    const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    REQUIRE(d >= 0);
    CHECK(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    H5Dclose(d);
  };
  write("seq", H5T_NATIVE_UINT64, seq.data());
  write("flags", H5T_NATIVE_UINT32, flags.data());
  write("dropped_before", H5T_NATIVE_UINT32, dropped.data());
  H5Fclose(f);
}

void check_images_keep_the_gap(const fs::path& images) {
  const hid_t f = H5Fopen(images.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const auto seq = h5r::dataset<uint64_t>(f, "seq");
  const auto flags = h5r::dataset<uint32_t>(f, "flags");
  const auto dropped = h5r::dataset<uint32_t>(f, "dropped_before");
  REQUIRE(seq.size() == 40);
  CHECK(seq[19] == 19);
  CHECK(seq[20] == 60);
  CHECK(seq[39] == 79);
  CHECK((flags[20] & kGapFlag) != 0);
  CHECK((flags[21] & kGapFlag) == 0);
  CHECK(dropped[20] == 40);
  CHECK(dropped[21] == 0);
  H5Fclose(f);
}

}  // namespace

TEST_CASE("replay and reconstruct of a raw recording keep its seq, gap flags and drops") {
  const fs::path d = eit::test::fresh_work_dir("rawgap");
  const fs::path raw = d / "raw.h5";
  REQUIRE(run_eitstream(fmt::format("run --frames 40 --fps 100 --policy lossless --endpoint "
                                    "'tcp://127.0.0.1:*' --quiet --record-raw {}",
                                    raw.string()))
              .code == 0);
  forge_gap(raw);

  const auto r = run_eitstream(
      fmt::format("reconstruct {} -o {} --quiet", raw.string(), (d / "offline.h5").string()));
  CAPTURE(r.output);
  REQUIRE(r.code == 0);
  check_images_keep_the_gap(d / "offline.h5");
  // Times count the gap: row 20 (seq 60) is 0.6 s after row 0 at 100 frames/s.
  const hid_t f = H5Fopen((d / "offline.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const auto t = h5r::dataset<int64_t>(f, "t_acquired_ns");
  H5Fclose(f);
  REQUIRE(t.size() == 40);
  CHECK(t[20] - t[0] == 600'000'000);

  const auto replay = run_eitstream(
      fmt::format("run --source {} --fps 0 --policy lossless --endpoint 'tcp://127.0.0.1:*' "
                  "--quiet --record {}",
                  raw.string(), (d / "replayed.h5").string()));
  CAPTURE(replay.output);
  REQUIRE(replay.code == 0);
  check_images_keep_the_gap(d / "replayed.h5");
}
