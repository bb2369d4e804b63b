// Inputs a user can give by mistake, through the real binary: each is refused with a message
// that names the file or option and what was expected, or read without silently spoiling the
// result (a NaN frame, a short recording whose spectrum has no peak).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "npy_recording.hpp"
#include "test_data.hpp"

namespace fs = std::filesystem;
using namespace eit::test;

TEST_CASE("model build refuses GREIT options that would give a matrix without an image") {
  const fs::path dir = fresh_work_dir("refusals_build");
  CliResult r = run_eitstream(
      fmt::format("model build --algorithm greit --p -3 -o {}", (dir / "a.h5").string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "greit: p -3 must be ≥ 0"));
  r = run_eitstream(
      fmt::format("model build --algorithm greit --lambda 1e300 -o {}", (dir / "b.h5").string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "H is all zero"));
  CHECK_FALSE(fs::exists(dir / "b.h5"));
  fs::remove_all(dir);
}

TEST_CASE("a recording's values per frame beyond any device is refused naming the option") {
  const fs::path dir = fresh_work_dir("refusals_vpf");
  const fs::path f = write_npy_recording(dir / "x.npy", 4);
  const CliResult r = run_eitstream(fmt::format(
      "reconstruct {} --recording-format f32 --values-per-frame 4611686018427387904 -o {}",
      f.string(), (dir / "o.h5").string()));
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(contains(r.output, "--values-per-frame 4611686018427387904: expected at most 16777216"));
  fs::remove_all(dir);
}

TEST_CASE("a file of unknown format names the option that says the format") {
  const fs::path dir = fresh_work_dir("refusals_format");
  std::ofstream(dir / "x.bin") << "neither a header nor numbers\n";
  const CliResult r = run_eitstream(
      fmt::format("reconstruct {} -o {}", (dir / "x.bin").string(), (dir / "o.h5").string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "give --recording-format"));
  fs::remove_all(dir);
}

TEST_CASE("a Dräger file with its header and no frame is refused, not read as zero frames") {
  const auto eit = shared_data_file("recordings/draeger_ID_SC_10_60.eit");
  if (!eit) return;
  const fs::path dir = fresh_work_dir("refusals_draeger");
  std::ifstream in(*eit, std::ios::binary);
  std::vector<char> head(7559);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  std::ofstream(dir / "zero.eit", std::ios::binary).write(head.data(), in.gcount());
  const CliResult r =
      run_eitstream(fmt::format("reconstruct {} --reference model -o {}",
                                (dir / "zero.eit").string(), (dir / "z.h5").string()));
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(contains(r.output, "zero.eit: "));
  CHECK(contains(r.output, "less than one frame (5495 bytes, format 51)"));
  fs::remove_all(dir);
}

TEST_CASE("a recording of another protocol names the file and the model to build") {
  const auto txt = shared_data_file("recordings/openeit_simdata.txt");
  if (!txt) return;
  const fs::path out = cli_temp_path("eit_refusals", "o.h5");
  const CliResult r =
      run_eitstream(fmt::format("reconstruct {} -o {}", txt->string(), out.string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "openeit_simdata.txt: device layout"));
  CHECK(contains(r.output, "model build --electrodes 32 --drive-distance 16"));
}

TEST_CASE("indices: a NaN frame stays out of the reference and the JSON stays JSON") {
  const fs::path dir = fresh_work_dir("refusals_indices");
  const fs::path nan = write_npy_recording(dir / "nan.npy", 60, 20);
  CliResult r = run_eitstream(
      fmt::format("indices {} --fps 10 -o {}", nan.string(), (dir / "n.json").string()));
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "1 invalid samples"));
  const auto parsed = nlohmann::json::parse(std::ifstream(dir / "n.json"), nullptr, false);
  CHECK_FALSE(parsed.is_discarded());

  // Three frames: no spectral peak, written as null rather than the invalid token nan.
  const fs::path three = write_npy_recording(dir / "three.npy", 3);
  r = run_eitstream(
      fmt::format("indices {} --fps 10 -o {}", three.string(), (dir / "t.json").string()));
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(std::ifstream(dir / "t.json"));
  CHECK(j["global_spectral_peak_hz"].is_null());
  fs::remove_all(dir);
}

TEST_CASE("indices: a frame rate or per-breath option out of range is refused naming it") {
  const fs::path dir = fresh_work_dir("refusals_indices_opts");
  const fs::path f = write_npy_recording(dir / "v.npy", 30);
  CliResult r = run_eitstream(fmt::format("indices {} --fps -5", f.string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "--fps -5: expected a frame rate > 0"));
  r = run_eitstream(fmt::format("indices {} --fps 10 --rvd-threshold 1.5", f.string()));
  CHECK(r.code == 2);
  CHECK(contains(r.output, "--rvd-threshold"));
  CHECK(contains(r.output, "1.5 is outside (0, 1)"));
  r = run_eitstream(fmt::format("indices {} --fps 10 --max-breath 1e9", f.string()));
  CHECK(r.code == 2);
  CHECK(contains(r.output, "--max-breath"));
  fs::remove_all(dir);
}

TEST_CASE("run refuses a stream name that would split or overflow its topic") {
  CliResult r = run_eitstream("run --stream icu/bed1 --duration 1 --quiet");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "--stream 'icu/bed1': expected 1 to 200 letters, digits"));
  r = run_eitstream(fmt::format("run --stream {} --duration 1 --quiet", std::string(201, 'a')));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "--stream 'aaaa"));
}

TEST_CASE("a mistyped command is named with the nearest one") {
  const CliResult r = run_eitstream("recontruct x.get -o y.h5");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "unknown command 'recontruct' (did you mean 'reconstruct'?)"));
  CHECK_FALSE(contains(r.output, "A subcommand is required"));
}

TEST_CASE("model build refuses options its algorithm does not read, naming them") {
  const fs::path out = cli_temp_path("eit_refusals", "unused.h5");
  CliResult r = run_eitstream(fmt::format(
      "model build --algorithm jac --grid 64 --s 5 --weight simple --iterations 3 -o {}",
      out.string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "--grid, --s, --weight, --iterations: not used by --algorithm jac"));
  r = run_eitstream(
      fmt::format("model build --algorithm greit --prior laplacian -o {}", out.string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "--prior: not used by --algorithm greit"));
  r = run_eitstream(fmt::format("model build --contact-impedance 5 -o {}", out.string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "--contact-impedance: used only by the complete electrode model"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE(
    "whole-number options refuse a sign or leading zeros instead of wrapping or reading octal") {
  CliResult r = run_eitstream("run --frames -1 --quiet");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "'-1' is not a non-negative whole number in decimal"));
  r = run_eitstream("bench --frames 0400 --rate 50");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "'0400'"));
  r = run_eitstream("bench --batch=-1 --rate 50");
  CHECK(r.code != 0);
  CHECK(contains(r.output, "--batch '-1': expected a whole number"));
}

TEST_CASE("run --config values get the command line's range checks") {
  const fs::path cfg = cli_temp_path("eit_refusals", "chunk.json");
  std::ofstream(cfg) << R"({"record_chunk": 0})";
  CliResult r = run_eitstream(fmt::format("run --config {} --duration 1 --quiet", cfg.string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "--record-chunk 0: expected 1 to"));
  std::ofstream(cfg) << R"({"fps": 1e400})";
  r = run_eitstream(fmt::format("run --config {} --duration 1 --quiet", cfg.string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "not valid JSON"));
  fs::remove(cfg);
}

TEST_CASE("a protocol that leaves no measurement is refused when it is made, not at the save") {
  const fs::path out = cli_temp_path("eit_refusals", "x4.h5");
  const CliResult r =
      run_eitstream(fmt::format("model build --electrodes 4 --exclude-next 1 -o {}", out.string()));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "exclude_next 1 leave no measurement"));
  CHECK_FALSE(contains(r.output, "H is"));
  CHECK_FALSE(fs::exists(out));
}
