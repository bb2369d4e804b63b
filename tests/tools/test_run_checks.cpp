// `eitstream run`'s set-up checks through the real binary: a value out of range is refused
// naming the option (from the command line and from a config file alike), and an option that
// the chosen source ignores is named in a warning instead of running silently.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_run.hpp"
#include "test_data.hpp"

using eit::test::contains;
using eit::test::run_eitstream;

namespace {

const char* kQuick = "--frames 5 --fps 0 --endpoint 'tcp://127.0.0.1:*' --quiet";

}  // namespace

TEST_CASE("run refuses out of range values naming the option and its range") {
  struct Case {
    const char* args;
    int code;
    const char* message;
  };
  const Case cases[] = {
      {"--fps -5", 2, "--fps: expected a rate in frames/s, or 0 for as fast as possible"},
      {"--duration -1", 1, "--duration -1: expected seconds ≥ 0 (0: until Ctrl-C)"},
      {"--queue 0", 1, "--queue 0: expected a capacity of 2 to 1048576 frames"},
      {"--queue 4000000", 1, "--queue 4000000: expected a capacity of 2 to 1048576 frames"},
      {"--max-batch 0", 1, "--max-batch 0: expected 1 or more frames"},
      // CLI11's own range check (its wording of the range differs between versions).
      {"--publish-batch 0", 2, "--publish-batch: Value 0 not in range"},
      {"--source-timeout -2", 1, "--source-timeout -2: expected seconds ≥ 0 (0: never)"},
  };
  for (const Case& k : cases) {
    CAPTURE(k.args);
    const auto r = run_eitstream(fmt::format("run {} --endpoint 'tcp://127.0.0.1:*'", k.args));
    CAPTURE(r.output);
    CHECK(r.code == k.code);
    CHECK(contains(r.output, k.message));
  }
  // A config file's values pass no command-line check: set-up refuses them the same way.
  const auto path = eit::test::cli_temp_path("runchecks", "config.json");
  std::ofstream(path) << R"({"fps": -5, "frames": 5})";
  const auto fps = run_eitstream(fmt::format("run --config {}", path.string()));
  CHECK(fps.code == 1);
  CHECK(contains(fps.output, "--fps -5: expected a rate in frames/s"));
  // -1 is the option's own "not given": from a file it must not silently mean the default.
  std::ofstream(path) << R"({"fps": -1, "frames": 5})";
  const auto sentinel = run_eitstream(fmt::format("run --config {}", path.string()));
  CHECK(sentinel.code == 1);
  CHECK(contains(sentinel.output, "key 'fps': --fps -1: expected a rate in frames/s"));
  std::ofstream(path) << R"({"publish_batch": 0})";
  const auto batch = run_eitstream(fmt::format("run --config {}", path.string()));
  CHECK(batch.code == 1);
  CHECK(contains(batch.output, "--publish-batch 0: expected 1 to 4096 images"));
  std::ofstream(path) << R"({"duration": -1})";
  const auto duration = run_eitstream(fmt::format("run --config {}", path.string()));
  CHECK(duration.code == 1);
  CHECK(contains(duration.output, "--duration -1: expected seconds"));
}

TEST_CASE("run names the options its source ignores") {
  const auto phantom = run_eitstream(fmt::format("run {} --invert --loop --speed 2", kQuick));
  CAPTURE(phantom.output);
  CHECK(phantom.code == 0);
  for (const char* option : {"--invert", "--loop", "--speed"})
    CHECK(contains(phantom.output, fmt::format("warning: {} ignored: it applies to recordings (a "
                                               "file given to --source), not to a synthetic "
                                               "phantom",
                                               option)));
  CHECK_FALSE(contains(phantom.output, "--snr ignored"));

  const auto live = run_eitstream(
      "run --source tcp://127.0.0.1:1 --source-timeout 1 --snr 20 --recording-format draeger "
      "--endpoint 'tcp://127.0.0.1:*' --quiet");
  CAPTURE(live.output);
  CHECK(contains(live.output, "--snr ignored: it sets the synthetic phantom's noise"));
  CHECK(contains(live.output,
                 "--recording-format ignored: it applies to recordings (a file given "
                 "to --source), not to a live source"));

  const auto quiet = run_eitstream(fmt::format("run {} --snr 30", kQuick));
  CHECK(quiet.code == 0);
  CHECK_FALSE(contains(quiet.output, "ignored"));
}

TEST_CASE("run warns when the whole stream went into the reference capture") {
  const auto r = run_eitstream(fmt::format("run {} --reference first:10", kQuick));
  CAPTURE(r.output);
  CHECK(contains(r.output,
                 "warning: all 5 frames were taken as the reference (the stream ended "
                 "during its capture), so no image was made"));
  const auto enough = run_eitstream(fmt::format("run {} --reference first:2", kQuick));
  CHECK_FALSE(contains(enough.output, "were taken as the reference"));
}

TEST_CASE("run refuses a reference capture as long as the recording it replays once") {
  const auto file = eit::test::shared_data_file("recordings/P04P-1016.get");
  if (!file) return;
  const std::string common =
      fmt::format("run --source {} --fps 0 --endpoint 'tcp://127.0.0.1:*' --quiet", file->string());
  // Old: it ran, took all 220 frames into the reference, made no image and exited 0.
  const auto all = run_eitstream(common + " --reference first:500");
  CAPTURE(all.output);
  CHECK(all.code == 1);
  CHECK(contains(all.output, "has 220 frames, so a capture of 500 would take them all"));
  CHECK(contains(all.output, "expected first:N with N < 220 (or --loop)"));
  CHECK(run_eitstream(common + " --reference first:220").code == 1);
  CHECK(run_eitstream(common + " --reference first:219").code == 0);
  CHECK(run_eitstream(common + " --reference first:500 --loop --frames 600").code == 0);
}

TEST_CASE("run takes a reference capture from a raw stream recording it cannot count ahead") {
  // A stream decoder's file has no frame count and is no recording a reader opens: the check
  // above used to reopen it as one and failed the run ("format 'f32-stream' unknown").
  const auto dir = std::filesystem::temp_directory_path() / "eit-run-stream-reference";
  std::filesystem::create_directories(dir);
  const auto path = dir / "frames.f32";
  {
    std::vector<float> values(30 * 208);
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = 1.0f + 0.001f * static_cast<float>(i % 97);
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(float)));
  }
  const auto r = run_eitstream(
      fmt::format("run --source {} --recording-format f32-stream --values-per-frame 208 --fps 0 "
                  "--reference first:5 --endpoint 'tcp://127.0.0.1:*' --quiet",
                  path.string()));
  CAPTURE(r.output);
  CHECK(r.code == 0);
  CHECK_FALSE(contains(r.output, "unknown"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("run warns when --fps overrides the frame rate a recording states") {
  const auto file = eit::test::shared_data_file("recordings/P04P-1016.get");
  if (!file) return;
  const std::string common = fmt::format(
      "run --source {} --frames 20 --endpoint 'tcp://127.0.0.1:*' --quiet", file->string());
  // Old: silent, and the start line said "recorded at 100 Hz" for a 13 Hz file.
  const auto over = run_eitstream(common + " --fps 100");
  CAPTURE(over.output);
  CHECK(over.code == 0);
  CHECK(contains(over.output, "warning: --fps 100 overrides the 13 Hz that P04P-1016.get states"));
  const auto own = run_eitstream(common + " --speed 8");
  CHECK_FALSE(contains(own.output, "overrides"));
}
