// Files a user keeps are never replaced or destroyed by a command that was not told to, and
// option values that would only allocate or misbehave are refused at parse time with the interval
// in words. Through the real binary.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_run.hpp"
#include "npy_recording.hpp"

namespace fs = std::filesystem;
using namespace eit::test;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST_CASE("model rehash -o refuses an existing file without --force") {
  const fs::path d = fresh_work_dir("safety_rehash");
  REQUIRE(run_eitstream(fmt::format("model export builtin -o {}", (d / "m.h5").string())).code ==
          0);
  std::ofstream(d / "keep.h5") << "a recording";
  CliResult r = run_eitstream(
      fmt::format("model rehash {} -o {}", (d / "m.h5").string(), (d / "keep.h5").string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "the file exists; give --force"));
  CHECK(slurp(d / "keep.h5") == "a recording");
  r = run_eitstream(fmt::format("model rehash {} -o {} --force", (d / "m.h5").string(),
                                (d / "keep.h5").string()));
  CHECK(r.code == 0);
  fs::remove_all(d);
}

TEST_CASE(
    "emulate --to file:// refuses an existing file, and its own --from file even with --force") {
  const fs::path d = fresh_work_dir("safety_emulate");
  std::ofstream(d / "keep.get") << "precious";
  CliResult r = run_eitstream(
      fmt::format("emulate --from synthetic --to file://{} --count 2", (d / "keep.get").string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "the file exists; give --force"));
  CHECK(slurp(d / "keep.get") == "precious");
  const fs::path rec = write_npy_recording(d / "rec.npy", 20);
  r = run_eitstream(fmt::format("emulate --from {} --to file://{} --count 2 --force", rec.string(),
                                rec.string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "which this command reads"));
  CHECK(fs::file_size(rec) > 20 * 208 * 4);
  fs::remove_all(d);
}

TEST_CASE("an output that is the input is refused even with --force") {
  const fs::path d = fresh_work_dir("safety_input");
  const fs::path rec = write_npy_recording(d / "rec.npy", 20);
  const auto size = fs::file_size(rec);
  CliResult r =
      run_eitstream(fmt::format("reconstruct {} -o {} --force", rec.string(), rec.string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "which this command reads"));
  r = run_eitstream(fmt::format("run --source {} --fps 0 --record {} --force --quiet", rec.string(),
                                rec.string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "--record " + rec.string() + ": that is the --source file"));
  r = run_eitstream(fmt::format("indices {} --fps 10 -o {} --images-out {}", rec.string(),
                                (d / "s.json").string(), (d / "s.json").string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "-o " + (d / "s.json").string()));
  CHECK(fs::file_size(rec) == size);
  fs::remove_all(d);
}

TEST_CASE("a recorder that cannot be created leaves no empty file of the other behind") {
  const fs::path d = fresh_work_dir("safety_orphan");
  const CliResult r = run_eitstream(
      fmt::format("run --duration 1 --quiet --record {} --record-raw /proc/eit_cannot_create.h5",
                  (d / "images.h5").string()));
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(contains(r.output, "/proc/eit_cannot_create.h5"));
  CHECK_FALSE(fs::exists(d / "images.h5"));
  fs::remove_all(d);
}

TEST_CASE("sizes and times out of range are refused at parse time with the interval") {
  CliResult r = run_eitstream("reconstruct x.npy --chunk 100000000 -o y.h5");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "100000000 is outside [1, 65536]"));
  r = run_eitstream("reconstruct x.npy --batch 100000000 -o y.h5");
  CHECK(r.code == 2);
  r = run_eitstream("reconstruct x.npy --fps 0 -o y.h5");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "0 is outside (0, inf)"));
  CHECK_FALSE(contains(r.output, "1797693134862315"));  // no 300-digit largest double
  r = run_eitstream("model build --grid 4096 -o y.h5");
  CHECK(r.code == 2);
  r = run_eitstream("worker nats://127.0.0.1:1 --batch 0");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "--batch"));
  r = run_eitstream("listen tcp://127.0.0.1:1 --timeout -1");
  CHECK(r.code == 2);
  r = run_eitstream("emulate --from synthetic --to pty --wait-s -1");
  CHECK(r.code == 2);
  r = run_eitstream("run --max-batch 300000 --duration 1 --quiet");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "--max-batch 300000: expected at most --queue (256) frames"));
}
