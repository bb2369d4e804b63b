#pragma once
// `eitstream run`'s numeric settings checked at set-up, from the command line and the config file
// alike (CLI11's own checks see only the command line), and the options that do nothing for the
// chosen source named, so a typo or a misplaced option never runs silently as something else.
#include <string>
#include <vector>

#include "run_config.hpp"

namespace eit::cli {

// Throws CommandError naming the option, its value and the range for: a negative --fps (other
// than the "not given" default), a negative or non-finite --duration or --source-timeout,
// --queue outside 2..2^20, --max-batch 0, --publish-batch outside 1..kMaxImageBatch, a
// non-finite --snr.
void check_run_values(const RunConfig& c);

// The options given (not at their defaults) that the source ignores: the recording options for
// anything but a recording, --snr for anything but a phantom, --loop for a live device. One
// warning line each, for stderr.
std::vector<std::string> ignored_option_warnings(const RunConfig& c);

}  // namespace eit::cli
