#pragma once
// The one table of recording options shared by `run`, `emulate` and `reconstruct`: how to read a
// recording (format, .mat variable, values per frame, device layout, complex part, polarity) and
// how fast to replay it. Each command adds the same flags with the same help from here, and
// `run` also takes them from its JSON config file (their keys are in run_config.cpp's table).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "eit/acquisition/replay_source.hpp"

namespace eit::cli {

struct RecordingArgs {
  std::string format;  // --recording-format
  std::string variable;
  uint64_t values_per_frame = 0;
  std::string layout;
  std::string complex_part = "real";
  bool invert = false;
  double speed = 1.0;  // replay only (run, emulate)
};

// Adds --recording-format, --variable, --values-per-frame, --layout, --complex, --invert and,
// with `replay`, --speed to `cmd`, writing into `args` (which must outlive the parse).
void add_recording_options(CLI::App* cmd, RecordingArgs& args, bool replay);

// Checks the values (throws CommandError naming the option) and converts them.
acquisition::RecordingOptions to_recording_options(const RecordingArgs& args);

}  // namespace eit::cli
